"""Offline learning as a user runs it: record a dataset, learn from it (checkpointed, resumed), record a run's
actors, and the clear errors for what cannot work."""

from __future__ import annotations

import json
import os
import re
import shutil

import minari
import numpy as np
import pytest

from acme.testing.experts import write_cartpole_expert_dataset
from baselines.cli import main

CARTPOLE = "gymnasium:CartPole-v1"


@pytest.fixture(scope="module")
def expert_dataset(tmp_path_factory) -> str:
    directory = str(tmp_path_factory.mktemp("datasets") / "cartpole-expert")
    return write_cartpole_expert_dataset(directory, episodes=3)


def test_learn_offline_resume_then_record_the_policy_and_a_runs_actors(expert_dataset, tmp_path, capsys):
    checkpoints, first, second = (str(tmp_path / name) for name in ("checkpoints", "run1", "run2"))
    common = ["run", "bc", "--env", CARTPOLE, "--dataset", expert_dataset, "--eval-every", "200", "--no-progress"]
    assert main([*common, "--max-steps", "400", "--checkpoint-dir", checkpoints, "--run-dir", first]) == 0
    out = capsys.readouterr().out
    assert "Training bc offline on" in out and "(3 episodes, 1500 steps of gymnasium:CartPole-v1, in memory)" in out
    result = json.load(open(os.path.join(first, "result.json")))
    assert result["learner_steps"] == 400 and [e["learner_steps"] for e in result["evaluations"]] == [200, 400]
    assert os.path.exists(os.path.join(first, "policy", "manifest.json"))

    assert main([*common, "--max-steps", "600", "--checkpoint-dir", checkpoints, "--run-dir", second]) == 0
    out = capsys.readouterr().out
    assert "Resuming from checkpoint" in out and "ckpt-400: actor steps 0, learner steps 400" in out, out
    result = json.load(open(os.path.join(second, "result.json")))
    assert result["learner_steps"] == 600 and [e["learner_steps"] for e in result["evaluations"]] == [200, 400, 600]

    recorded = str(tmp_path / "bc-episodes")
    assert main(["record", "--snapshot", first, "--episodes", "2", "--out", recorded, "--epsilon", "0.2"]) == 0
    dataset = minari.MinariDataset(os.path.join(recorded, "data"))
    assert dataset.total_episodes == 2
    metadata = json.load(open(os.path.join(recorded, "data", "metadata.json")))
    assert metadata["acme_agent"] == "bc" and metadata["acme_exploration"]["epsilon"] == 0.2
    assert metadata["acme_environment_id"] == CARTPOLE and metadata["acme_snapshot"].endswith("policy")

    actors, dqn_checkpoints = str(tmp_path / "dqn-actors"), str(tmp_path / "dqn-checkpoints")
    dqn = ["run", "dqn", "--env", CARTPOLE, "--eval-every", "0", "--no-progress", "--checkpoint-dir", dqn_checkpoints]
    assert main([*dqn, "--max-steps", "600", "--record", actors, "--run-dir", str(tmp_path / "dqn")]) == 0
    dataset = minari.MinariDataset(os.path.join(actors, "data"))
    assert 0 < dataset.total_steps <= 600 and dataset.total_episodes >= 10  # random early episodes are short
    assert all(np.all(np.isin(e.actions, [0, 1])) for e in dataset.iterate_episodes())
    metadata = json.load(open(os.path.join(actors, "data", "metadata.json")))
    assert metadata["acme_agent"] == "dqn"  # as `record` names it, the registry's name
    assert metadata["acme_actor_steps"] == [[0, 600]] and metadata["acme_missing_steps"] == []

    # Resumed from the checkpoint at step 600 with no shard of the steps before it (as after a SIGKILL): the
    # dataset says they are missing.
    resumed = str(tmp_path / "dqn-resumed")
    assert main([*dqn, "--max-steps", "800", "--record", resumed, "--run-dir", str(tmp_path / "dqn2")]) == 0
    metadata = json.load(open(os.path.join(resumed, "data", "metadata.json")))
    assert metadata["acme_actor_steps"] == [[600, 800]] and metadata["acme_missing_steps"] == [[0, 600]]
    assert "actor steps 0 to 600 are not in this dataset" in metadata["acme_missing_note"]


def test_a_distributed_runs_actors_are_recorded_into_one_dataset(tmp_path):
    """Each actor node of a threads run writes its episodes as a shard when it ends; the run merges the shards
    into one dataset that Minari reads, and removes them."""
    actors = str(tmp_path / "actors")
    argv = ["run", "dqn", "--env", CARTPOLE, "--launcher", "threads", "--num-actors", "2", "--max-steps", "1500"]
    argv += ["--eval-every", "0", "--record", actors, "--no-progress", "--run-dir", str(tmp_path / "run")]
    assert main(argv) == 0
    dataset = minari.MinariDataset(os.path.join(actors, "data"))
    metadata = json.load(open(os.path.join(actors, "data", "metadata.json")))
    assert metadata["acme_shards"] == 2 and metadata["acme_agent"] == "dqn"
    assert 500 <= dataset.total_steps <= 1500 + 2 * 500 and dataset.total_episodes >= 10
    assert not os.path.exists(actors + ".shards")
    result = json.load(open(os.path.join(tmp_path, "run", "result.json")))  # as an in-process run's
    assert result["launcher"] == "threads" and result["actor_steps"] >= 1500 and result["evaluations"] == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "bc", "--env", "gymnasium:Acrobot-v1"], r"does not match the environment: its observations"),
        (["run", "ppo", "--env", CARTPOLE], "PPO learns on-policy from a rollout queue"),
        (["run", "bc", "--env", CARTPOLE, "--launcher", "anakin"], "--dataset is for the local or threads or ray"),
        (["run", "bc", "--env", CARTPOLE, "--num-envs", "4"], "--num-envs sets up actors"),
        (
            ["run", "bc", "--env", CARTPOLE, "--record", "x"],
            "--record records actors, and a run from a dataset has none",
        ),
        (["run", "bc", "--env", CARTPOLE, "--stream-samples-per-insert", "8"], "give --stream-buffer N too"),
        (
            ["run", "bc", "--env", CARTPOLE, "--stream-buffer", "-1"],
            "--stream-buffer must be an integer >= 0 and at most 1,073,741,824, got -1",
        ),
    ],
)
def test_offline_runs_that_cannot_work_are_refused(expert_dataset, tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--dataset", expert_dataset, "--no-progress", "--run-dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    assert message.replace("\\", "") in capsys.readouterr().err or pytest.fail(capsys.readouterr().err)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: os.remove(os.path.join(d, "data", "metadata.json")), r"No Minari dataset at .*: expected "),
        (
            lambda d: os.truncate(os.path.join(d, "data", "main_data.hdf5"), 3000),
            r"main_data.hdf5 is not a readable HDF5 file \(.*truncated file",
        ),
    ],
    ids=["not a dataset", "truncated HDF5"],
)
def test_a_folder_without_a_readable_dataset_is_refused_in_one_paragraph(
    expert_dataset, tmp_path, capsys, damage, message
):
    """Exit 2 with the error naming the folder or file, no traceback, and no run folder left behind."""
    damaged = str(tmp_path / "damaged")
    shutil.copytree(expert_dataset, damaged)
    damage(damaged)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "bc", "--env", CARTPOLE, "--dataset", damaged, "--no-progress", "--run-dir", str(run)])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and re.fullmatch(rf"error: .*{message}.*\n", error), error
    assert "Traceback" not in error and not run.exists()


def test_recording_refuses_another_kind_of_exploration_and_an_existing_dataset(expert_dataset, tmp_path, capsys):
    run = str(tmp_path / "run")
    flags = ["--max-steps", "100", "--eval-every", "0", "--no-progress", "--run-dir", run]
    assert main(["run", "bc", "--env", CARTPOLE, "--dataset", expert_dataset, *flags]) == 0
    for argv, message in (
        (["--out", str(tmp_path / "new"), "--noise", "0.1"], "noise (0.1) perturbs continuous actions"),
        (["--out", expert_dataset], "already holds a dataset"),
    ):
        with pytest.raises(SystemExit):
            main(["record", "--snapshot", run, "--episodes", "1", *argv])
        assert message in capsys.readouterr().err
    for argv, message in (  # refused before the run starts: no run directory is made
        (["--record", expert_dataset], f"--record {expert_dataset} already holds a dataset"),
        (["--stream-buffer", "100"], "--stream-buffer streams a dataset; give --dataset DIR"),
    ):
        with pytest.raises(SystemExit):
            main(["run", "dqn", "--env", CARTPOLE, *argv, "--no-progress", "--run-dir", str(tmp_path / "refused")])
        assert message in capsys.readouterr().err and not os.path.exists(tmp_path / "refused")


@pytest.mark.parametrize(
    "launcher, stream",
    # On Ray the same nodes run from the command line in tests/test_run_matrix.py (offline-ray).
    [("threads", []), ("threads", ["--stream-buffer", "300"])],
)
def test_a_distributed_offline_run_has_a_learner_and_an_evaluator_node(
    expert_dataset, tmp_path, capsys, launcher, stream
):
    """The learner node reads the dataset (into memory, or streamed through a buffer of a fifth of it) and steps to
    the budget; the evaluator node evaluates on the way and once the learner is done, then ends the program."""
    run = str(tmp_path / "run")
    argv = ["run", "bc", "--env", CARTPOLE, "--dataset", expert_dataset, "--launcher", launcher, "--no-progress"]
    assert main([*argv, *stream, "--max-steps", "600", "--eval-every", "300", "--run-dir", run]) == 0
    out = capsys.readouterr().out
    assert f"Training bc offline on {expert_dataset} (" in out and f") on the {launcher} launcher for" in out
    from baselines import results

    rows = results.evaluator_rows(run)
    assert len(rows) >= 2 and int(float(rows[-1]["learner_steps"])) == 600
    result = json.load(open(os.path.join(run, "result.json")))
    assert result["learner_steps"] == 600 and [e["learner_steps"] for e in result["evaluations"]][-1] == 600
    assert os.path.getsize(os.path.join(run, "learning_curve.png")) > 0
    assert float(rows[-1]["evaluation_return"]) >= 475  # 3 expert episodes suffice for CartPole
