"""Baseline results: per-seed records, the summary over seeds, and the reproduce command's errors."""

import csv
import dataclasses
import glob
import json
import os

import pytest

from baselines import registry, results
from baselines.cli import main


def _write_run_dir(path, seed, returns, agent="sac", env="gymnasium:Pendulum-v1"):
    path.mkdir()
    evaluations = [
        {"actor_steps": 2_000 * (i + 1), "mean_return": r, "std_return": 1.0, "wall_seconds": 10.0 * (i + 1)}
        for i, r in enumerate(returns)
    ]
    (path / "result.json").write_text(
        json.dumps(
            {
                "agent": agent,
                "environment": env,
                "seed": seed,
                "actor_steps": 2_000 * len(returns),
                "learner_steps": 1_900 * len(returns),
                "wall_seconds": 10.0 * len(returns),
                "evaluations": evaluations,
            }
        )
    )
    return path


def test_records_and_summary_over_seeds(tmp_path):
    runs = tmp_path / "runs"
    first = results.record_from_run_dir(str(_write_run_dir(tmp_path / "a", 0, [-900.0, -150.0, -170.0])), str(runs))
    assert first["reached_target"] and first["steps_to_target"] == 4_000 and first["seconds_to_target"] == 20.0
    assert first["best_return"] == -150.0 and first["final_return"] == -170.0
    assert first["target_return"] == registry.BASELINES[("sac", "gymnasium:Pendulum-v1")].target_return
    missed = results.record_from_run_dir(str(_write_run_dir(tmp_path / "b", 1, [-900.0, -400.0, -230.0])), str(runs))
    assert not missed["reached_target"] and missed["steps_to_target"] is None
    results.record_from_run_dir(
        str(_write_run_dir(tmp_path / "c", 0, [100.0], agent="dqn", env="gymnasium:CartPole-v1")), str(runs)
    )

    assert results.describe_records("sac", "gymnasium:Pendulum-v1", str(runs)) == "seeds 0, 1 recorded, 1/2 at target"
    assert results.describe_records("dqn", "gymnasium:CartPole-v1", str(runs)) == "seeds 0 recorded, 0/1 at target"
    assert results.describe_records("td3", "gymnasium:Pendulum-v1", str(runs)) == "no records"

    output = tmp_path / "summary.json"
    summary = results.summarize(str(runs), str(output), agents=["sac"])
    assert json.loads(output.read_text()) == summary
    (row,) = summary["results"]  # the dqn run is filtered out
    assert row["agent"] == "sac" and row["seeds"] == [0, 1]
    assert row["seeds_reaching_target"] == "1/2"
    assert row["final_return"] == {"mean": -200.0, "std": 30.0}
    assert row["steps_to_target"] == [4_000, None]
    table = results.summary_table(summary)
    assert "| sac | gymnasium:Pendulum-v1 | 1/2 | -200.0 ± 30.0 |" in table
    # A summary written beside the records (reproduce's default with a --runs-dir of its own) is not a record.
    beside = runs / "continuous_control.json"
    assert results.summarize(str(runs), str(beside), agents=["sac"]) == summary
    assert results.summarize(str(runs), str(beside), agents=["sac"]) == summary


def test_a_summary_of_one_action_space_keeps_only_the_runs_in_it(tmp_path):
    """PPO acts in both: its CartPole runs belong to the discrete summary, its Pendulum runs to the continuous one."""
    runs = tmp_path / "runs"
    for name, agent, env in [
        ("a", "ppo", "gymnasium:CartPole-v1"),
        ("b", "ppo", "gymnasium:Pendulum-v1"),
        ("c", "dqn", "gymnasium:CartPole-v1"),
        ("d", "sac", "gymnasium:Pendulum-v1"),
    ]:
        results.record_from_run_dir(str(_write_run_dir(tmp_path / name, 0, [1.0], agent=agent, env=env)), str(runs))
    rows = lambda summary: sorted((r["agent"], r["environment"]) for r in summary["results"])  # noqa: E731
    assert rows(results.summarize(str(runs), group="discrete")) == [
        ("dqn", "gymnasium:CartPole-v1"),
        ("ppo", "gymnasium:CartPole-v1"),
    ]
    assert rows(results.summarize(str(runs), group="continuous")) == [
        ("ppo", "gymnasium:Pendulum-v1"),
        ("sac", "gymnasium:Pendulum-v1"),
    ]
    with pytest.raises(ValueError, match="group must be 'discrete', 'continuous' or None"):
        results.summarize(str(runs), group="any")


def test_a_summary_reads_the_action_space_from_the_records_without_building_their_environments(tmp_path, monkeypatch):
    """A reproduction on a machine without one environment library (craftax, say) still writes its summary."""
    runs = tmp_path / "runs"
    for name, env in [("a", "gymnasium:CartPole-v1"), ("b", "gymnasium:Pendulum-v1")]:
        run_dir = _write_run_dir(tmp_path / name, 0, [1.0], agent="ppo", env=env)
        record = results.record_from_run_dir(str(run_dir), str(runs))
        assert record["action_space"] == ("discrete" if "CartPole" in env else "continuous")

    def unavailable(environment_id):
        raise ValueError(f"{environment_id}: library not installed")

    monkeypatch.setattr(registry, "make_environment", unavailable)
    registry.action_group.cache_clear()  # the records' writing asked for these pairs; none may be answered again
    rows = results.summarize(str(runs), group="continuous")["results"]
    assert [(r["agent"], r["environment"]) for r in rows] == [("ppo", "gymnasium:Pendulum-v1")]


def test_reproduce_rejects_an_unregistered_baseline(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "sac", "--env", "gymnasium:CartPole-v1", "--seeds", "0"])
    assert exit_info.value.code == 2
    assert "No registered baseline for sac on gymnasium:CartPole-v1" in capsys.readouterr().err


def test_every_continuous_agent_has_both_reference_baselines():
    for agent in registry.CONTINUOUS_AGENTS:
        assert registry.get_agent(agent).action_space == "continuous"
        assert registry.BASELINES[(agent, "gymnasium:Pendulum-v1")].target_return == -200.0
        swingup = registry.BASELINES[(agent, "dm_control:cartpole/swingup")]
        assert swingup.target_return == 700.0 and swingup.max_steps == 100_000


@pytest.mark.parametrize("key", sorted(registry.BASELINES), ids=lambda key: f"{key[0]}-{key[1]}")
def test_every_registered_baseline_builds_a_valid_config(key):
    """A misspelt or out-of-range override fails here, not an hour into a reproduction."""
    agent, environment_id = key
    config = registry.get_agent(agent).make_config(**registry.BASELINES[key].config_overrides)
    for name, value in registry.BASELINES[key].config_overrides.items():
        assert getattr(config, name) == value


def test_recorded_baseline_runs_used_the_registered_overrides():
    """The published per-seed records describe the configuration `reproduce` runs today."""
    paths = sorted(glob.glob(os.path.join(results.RUNS_DIR, "*.json")))
    assert paths, "no recorded runs under baselines/results/runs"
    for path in paths:
        with open(path) as f:
            record = json.load(f)
        baseline = registry.BASELINES[(record["agent"], record["environment"])]
        registered = json.loads(json.dumps(dict(baseline.config_overrides)))  # as a record stores it: tuples are lists
        assert record["config_overrides"] == registered, path
        assert record["max_steps"] == baseline.max_steps, path


def _published() -> dict:
    return {path: open(path).read() for path in glob.glob(os.path.join(results.RUNS_DIR, "*.json"))}


def test_a_shortened_reproduction_cannot_overwrite_the_published_records(capsys):
    before = _published()
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "sac", "--env", "gymnasium:Pendulum-v1", "--seeds", "0", "--max-steps", "1000"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "--max-steps 1000 is below the registered budget of sac on gymnasium:Pendulum-v1 (20000)" in error
    assert "Give --runs-dir DIR" in error
    with pytest.raises(ValueError, match="would replace the published ones"):
        results.reproduce("sac", "gymnasium:Pendulum-v1", seed=0, max_steps=1_000)
    assert _published() == before


def test_a_shortened_reproduction_writes_its_record_logs_and_summary_under_runs_dir(tmp_path, capsys):
    """A short reproduction (1,200 steps: 200 past the replay's minimum) into a scratch records folder: its record,
    the learner's and evaluator's logs, and the summary; the published records are untouched."""
    before = _published()
    runs = tmp_path / "records"
    argv = ["reproduce", "sac", "--env", "gymnasium:Pendulum-v1", "--seeds", "0", "--max-steps", "1200"]
    assert main([*argv, "--runs-dir", str(runs), "--log-dir", str(tmp_path / "logs")]) == 0
    with open(results.run_file("sac", "gymnasium:Pendulum-v1", 0, str(runs))) as f:
        record = json.load(f)
    assert record["max_steps"] == 1_200 and record["actor_steps"] >= 1_200 and record["learner_steps"] > 0
    with open(runs / "continuous_control.json") as f:
        (row,) = json.load(f)["results"]
    assert row["max_steps"] == 1_200 and row["seeds"] == [0]
    logs = next(p for p in (tmp_path / "logs").rglob("learner.csv")).parent
    with open(logs / "learner.csv") as f:
        learner_rows = list(csv.DictReader(f))
    assert learner_rows and {"critic_loss", "learner_steps"} <= set(learner_rows[0])
    with open(logs / "evaluator.csv") as f:
        evaluations = [float(r["evaluation_return"]) for r in csv.DictReader(f)]
    assert evaluations and [step for step, _ in record["curve"]][-1] >= 1_200
    assert evaluations[-1] == pytest.approx(record["final_return"], abs=0.01)
    assert _published() == before


def test_list_shows_each_baselines_budget_target_and_records(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for (agent, environment_id), baseline in registry.BASELINES.items():
        line = f"  {agent} {environment_id}: {baseline.max_steps} steps, target {baseline.target_return:g}"
        if baseline.launcher == "anakin":
            line += " (anakin launcher: on the device)"
        elif baseline.launcher != "local":
            line += f" ({baseline.launcher} launcher, {baseline.num_actors} actors)"
        assert line + "; " + results.describe_records(agent, environment_id) in out
    assert "sac gymnasium:Pendulum-v1: 20000 steps, target -200; seeds 0, 1, 2 recorded, 3/3 at target" in out


@pytest.mark.parametrize(
    "launcher, num_actors, message",
    [
        ("slurm", 1, "launcher must be one of local, threads, ray, anakin"),
        ("local", 2, "num_actors must be 1"),
        ("anakin", 2, "num_actors must be 1"),
    ],
)
def test_a_baseline_refuses_an_unknown_launcher_and_actors_in_one_process(launcher, num_actors, message):
    with pytest.raises(ValueError, match=message):
        registry.Baseline("dqn", "gymnasium:CartPole-v1", 1_000, 475.0, launcher=launcher, num_actors=num_actors)
    with pytest.raises(ValueError, match="resets_per_step bounds the episode starts of the on-device loop"):
        registry.Baseline("dqn", "gymnasium:CartPole-v1", 1_000, 475.0, resets_per_step=4)


def test_a_distributed_reproduction_records_what_its_evaluator_node_returned(tmp_path, monkeypatch):
    """IMPALA's baseline runs as a program (here on the threads launcher, so no Ray is needed): its record
    holds the evaluations the evaluator node handed back, the ones it logged."""
    baseline = dataclasses.replace(registry.BASELINES[("impala", "gymnasium:CartPole-v1")], launcher="threads")
    monkeypatch.setitem(registry.BASELINES, ("impala", "gymnasium:CartPole-v1"), baseline)
    record = results.reproduce(
        "impala",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=2_000,
        runs_dir=str(tmp_path / "records"),
        log_dir=str(tmp_path / "logs"),
    )
    with open(tmp_path / "logs" / "evaluator.csv") as f:
        rows = list(csv.DictReader(f))
    assert record["curve"] == [[int(float(r["actor_steps"])), round(float(r["evaluation_return"]), 2)] for r in rows]
    assert record["actor_steps"] >= 2_000 and len(record["curve_seconds"]) == len(rows)
    # The learner's own count when the evaluator finished: at least what it had told the shared counter by then.
    assert record["learner_steps"] >= int(float(rows[-1].get("learner_steps") or 0))


def test_host_seeds_reproduced_in_one_call_run_one_after_another(tmp_path, monkeypatch):
    seeds = []

    def fake_distributed_run(config, baseline):
        seeds.append(config.seed)
        return [(1_000, 10.0, 1.0)], 1_000, 5, 1.0

    monkeypatch.setattr(results, "_run_distributed", fake_distributed_run)
    logs = str(tmp_path / "logs")
    records = results.reproduce_seeds(
        "impala", "gymnasium:CartPole-v1", [0, 1], max_steps=1_000, runs_dir=str(tmp_path / "records"), log_dir=logs
    )
    assert seeds == [0, 1] and [r["seed"] for r in records] == [0, 1]


def test_an_on_device_reproduction_trains_its_seeds_in_one_call_and_writes_a_record_each(tmp_path, capsys):
    """DQN on jax:CartPole-v1 (an anakin baseline), seeds 3 and 4 in one vmapped call, 2,000 steps each; with
    --checkpoint-dir the same command again resumes from the finished run's checkpoint and records the same."""
    runs = tmp_path / "records"
    argv = ["reproduce", "dqn", "--env", "jax:CartPole-v1", "--seeds", "3", "4", "--max-steps", "2000"]
    argv += ["--checkpoint-dir", str(tmp_path / "checkpoints")]
    assert main([*argv, "--runs-dir", str(runs), "--log-dir", str(tmp_path / "logs")]) == 0
    assert "seeds 3, 4 in one call" in capsys.readouterr().out
    assert len(list((tmp_path / "logs").iterdir())) == 1  # one call, one log folder
    again = tmp_path / "again"
    assert main([*argv, "--runs-dir", str(again), "--log-dir", str(tmp_path / "logs")]) == 0
    assert "Resuming from checkpoint" in capsys.readouterr().out
    for seed in (3, 4):
        paths = (results.run_file("dqn", "jax:CartPole-v1", seed, str(d)) for d in (runs, again))
        first, resumed = (json.loads(open(path).read()) for path in paths)
        assert resumed["curve"] == first["curve"] and resumed["wall_seconds"] > first["wall_seconds"]
    records = []
    for seed in (3, 4):
        with open(results.run_file("dqn", "jax:CartPole-v1", seed, str(runs))) as f:
            records.append(json.load(f))
    assert [r["seed"] for r in records] == [3, 4] and all(r["actor_steps"] >= 2_000 for r in records)
    assert records[0]["wall_seconds"] == records[1]["wall_seconds"]  # the one call's
    assert records[0]["curve"] != records[1]["curve"]  # two agents, not one copied
    with pytest.raises(ValueError, match=r"seeds must be consecutive integers .* got \[0, 2\]"):
        results.reproduce_seeds("dqn", "jax:CartPole-v1", [0, 2], max_steps=2_000, runs_dir=str(runs))
