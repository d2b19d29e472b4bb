"""``--logger wandb`` and ``--logger mlflow``: a CLI run's rows in the tracker's own files (W&B offline, MLflow's
SQLite store), read back with the tracker's formats: each label's run in the run's group, the evaluations against
actor steps, the summary row, the config; and the choice recorded in config.yaml."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from baselines import sweep
from baselines.cli import main

CARTPOLE = "gymnasium:CartPole-v1"


def _run(tmp_path, monkeypatch, tracker: str, *extra: str) -> str:
    monkeypatch.chdir(tmp_path)  # runs/mlflow.db goes here
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run_dir = str(tmp_path / "dqn-run")
    argv = ["run", "dqn", "--env", CARTPOLE, "--max-steps", "1000", "--eval-every", "500", "--eval-episodes", "2"]
    argv += ["--set", "min_replay_size=200"]  # the learner logs rows too
    assert main([*argv, "--logger", tracker, *extra, "--no-progress", "--run-dir", run_dir]) == 0
    return run_dir


def _wandb_records(path: str) -> list:
    """The protobuf records of a W&B ``.wandb`` file (a LevelDB-style log: 7-byte header, 32 KiB blocks of
    records, each with a 7-byte header of checksum, length and kind: whole, first, middle or last piece)."""
    from wandb.proto import wandb_internal_pb2

    data = open(path, "rb").read()
    assert data[:4] == b":W&B", path
    position, block, pieces, partial = 7, 32768, [], b""
    while position + 7 <= len(data):
        if block - position % block < 7:  # the rest of a block too small for a header is padding
            position += block - position % block
            continue
        length, kind = int.from_bytes(data[position + 4 : position + 6], "little"), data[position + 6]
        piece, position = data[position + 7 : position + 7 + length], position + 7 + length
        if kind == 1:
            pieces.append(piece)
        elif kind == 2:
            partial = piece
        elif kind == 3:
            partial += piece
        elif kind == 4:
            pieces.append(partial + piece)
        else:
            break
    records = []
    for piece in pieces:
        record = wandb_internal_pb2.Record()
        record.ParseFromString(piece)
        records.append(record)
    return records


def _wandb_runs(run_dir: str) -> dict[str, dict]:
    """Each W&B run under ``run_dir``, by job type: its group, name, config and logged rows."""
    runs = {}
    wandb_dir = os.path.join(run_dir, "wandb")
    for folder in sorted(os.listdir(wandb_dir)):
        if not folder.startswith("offline-run-"):
            continue
        (name,) = [f for f in os.listdir(os.path.join(wandb_dir, folder)) if f.endswith(".wandb")]
        run = {"rows": [], "config": {}}
        for record in _wandb_records(os.path.join(wandb_dir, folder, name)):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                run.update(group=record.run.run_group, job_type=record.run.job_type, name=record.run.display_name)
                run["config"].update({item.key: json.loads(item.value_json) for item in record.run.config.update})
            elif kind == "history":
                row = {
                    item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item
                }
                run["rows"].append(row)
        runs[run["job_type"]] = run
    return runs


def _config_yaml(run_dir: str) -> dict:
    with open(os.path.join(run_dir, "config.yaml")) as f:
        return yaml.safe_load(f)


def test_a_run_logs_to_weights_and_biases_offline(tmp_path, monkeypatch):
    run_dir = _run(tmp_path, monkeypatch, "wandb")
    runs = _wandb_runs(run_dir)
    assert {"learner", "evaluator", "summary"} <= set(runs)
    assert {run["group"] for run in runs.values()} == {"dqn-run"}
    evaluator = runs["evaluator"]
    assert evaluator["name"] == "dqn-run/evaluator"
    assert evaluator["config"]["agent"] == "dqn" and "learning_rate" in evaluator["config"]
    evaluations = [r for r in evaluator["rows"] if "evaluator/evaluation_return" in r]
    assert [r["actor_steps"] for r in evaluations] == [500, 1000]
    assert all(9 <= r["evaluator/evaluation_return"] <= 500 for r in evaluations)  # CartPole's range
    (summary,) = [r for r in runs["summary"]["rows"] if "summary/final_return" in r]
    assert summary["summary/final_return"] == evaluations[-1]["evaluator/evaluation_return"]
    result = json.load(open(os.path.join(run_dir, "result.json")))
    assert summary["summary/best_return"] == max(e["mean_return"] for e in result["evaluations"])
    assert _config_yaml(run_dir)["logger"] == "wandb"


def test_a_run_logs_to_mlflow_in_its_sqlite_store_grouped_as_asked(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    run_dir = _run(tmp_path, monkeypatch, "mlflow", "--logger-group", "lr-study")
    client = MlflowClient(tracking_uri="sqlite:///" + str(tmp_path / "runs" / "mlflow.db"))
    experiment = client.get_experiment_by_name("lr-study")
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    assert {"dqn-run/learner", "dqn-run/evaluator", "dqn-run/summary"} <= set(runs)
    evaluator = runs["dqn-run/evaluator"]
    assert evaluator.data.params["agent"] == "dqn" and evaluator.data.tags["acme.group"] == "lr-study"
    history = client.get_metric_history(evaluator.info.run_id, "evaluator/evaluation_return")
    assert sorted(m.step for m in history) == [500, 1000]
    result = json.load(open(os.path.join(run_dir, "result.json")))
    assert sorted(m.value for m in history) == sorted(e["mean_return"] for e in result["evaluations"])
    summary = runs["dqn-run/summary"].data.metrics
    assert summary["summary/final_return"] == result["evaluations"][-1]["mean_return"]
    assert _config_yaml(run_dir)["logger"] == "mlflow" and _config_yaml(run_dir)["logger_group"] == "lr-study"


def test_a_group_without_a_tracker_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "dqn", "--logger-group", "g", "--no-progress", "--run-dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    assert "--logger-group names the run's group in a tracker: give --logger wandb or mlflow too" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "run").exists()


def test_a_sweeps_trials_log_to_its_tracker_as_one_group(tmp_path):
    args, spec = sweep.parse(
        ["dqn", "--grid", "learning_rate=1e-3,3e-4", "--seeds", "0", "--logger", "mlflow", "--max-steps", "500"]
    )
    runs = [argv for setting in sweep.grid_settings(spec) for _, argv in sweep.trial_runs(spec, setting, [0], "x/lr")]
    assert len(runs) == 2
    for argv in runs:
        assert argv[argv.index("--logger") + 1] == "mlflow" and argv[argv.index("--logger-group") + 1] == "lr"
