"""The baselines command line."""

import json
import os
import signal

import pytest

from baselines.cli import main


def test_help_lists_agents_environments_and_options(capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for expected in (
        "dqn",
        "gymnasium:CartPole-v1",
        "bsuite:",
        "dm_control:",
        "--max-steps",
        "--seed",
        "--launcher",
        "--num-actors",
        "--ray-address",
    ):
        assert expected in out


def test_run_writes_logs_curve_and_final_line_and_keeps_them_when_the_snapshot_fails(tmp_path, capsys, monkeypatch):
    """One run of 4 environments on reverb replay where installed (local tables elsewhere). The snapshot is refused
    here (as dm_control's once was): the logs, result and curve are kept, and the run says what was not saved.
    Checkpointing, resuming and a snapshot that saves: test_environment_families.py."""
    from acme.utils import extras
    from acme.utils.checkpoint_files import CheckpointError
    from baselines import policy_export

    def refuse(*args, **kwargs):
        raise CheckpointError("OrderedDict at [1].mean is not a container a checkpoint can hold")

    monkeypatch.setattr(policy_export, "export_policy", refuse)
    replay = "reverb" if extras.available("reverb") else "local"
    flags = ["--seed", "1", "--max-steps", "2000", "--eval-every", "1000", "--eval-episodes", "2"]
    flags += ["--replay", replay, "--num-envs", "4", "--run-dir", str(tmp_path), "--no-progress"]
    flags += ["--set", "learning_rate=5e-4", "--set", "hidden_sizes=32,32"]
    assert main(["run", "dqn", "--env", "gymnasium:CartPole-v1", *flags]) == 1
    for name in ("actor.csv", "learner.csv", "evaluator.csv", "result.json", "learning_curve.png"):
        assert (tmp_path / name).exists(), name
    assert not (tmp_path / "policy").exists()
    result = json.loads((tmp_path / "result.json").read_text())
    # 1,000 steps past the replay minimum: enough for several [64, 64] stacks however reverb's prefetching is timed
    assert result["actor_steps"] == 2000 and result["learner_steps"] > 0
    assert [e["actor_steps"] for e in result["evaluations"]] == [1000, 2000]
    assert len((tmp_path / "actor.csv").read_text().splitlines()) > 10  # one row per episode
    out, err = capsys.readouterr()
    assert f"({replay} replay, 4 environments)" in out and "Best evaluation return" in out
    assert "error: the policy snapshot was not saved (CheckpointError: OrderedDict at [1].mean" in err
    assert f"result.json and learning curve are in {tmp_path}" in err
    # The run wrote its effective config (the baseline's n_step=20, and --set's values); --config re-reads it.
    written = (tmp_path / "config.yaml").read_text()
    assert "  learning_rate: 0.0005  #" in written and "  hidden_sizes: [32, 32]  #" in written
    assert "  n_step: 20  #" in written
    assert "\nlogger: csv\n" in written  # how the run logged, beside the agent and environment
    assert main(["config", "dqn", "--config", str(tmp_path)]) == 0
    assert capsys.readouterr().out == written.replace("logger: csv\n", "")


def test_unknown_environment_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--env", "gymnasium:NoSuchEnv-v0", "--no-progress", "--run-dir", str(tmp_path / "run")])
    assert done.value.code == 2
    assert "gymnasium has no environment 'NoSuchEnv-v0'" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "flags, message",
    [
        (
            ["--keep-checkpoints", "0"],
            "argument --keep-checkpoints: must be an integer >= 1 and at most 1,048,576, got 0.",
        ),
        (["--checkpoint-every-minutes", "-1"], "argument --checkpoint-every-minutes: must be a number > 0, got -1."),
    ],
)
def test_bad_checkpoint_flags_are_clear_errors(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as done:
        main(
            [
                "run",
                "dqn",
                "--no-progress",
                "--run-dir",
                str(tmp_path / "run"),
                "--checkpoint-dir",
                str(tmp_path / "ckpt"),
                *flags,
            ]
        )
    assert done.value.code == 2
    assert message in capsys.readouterr().err


def test_a_checkpoint_dir_holding_other_files_is_refused(tmp_path, capsys):
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "results.csv").write_text("1,2\n")
    with pytest.raises(SystemExit) as done:
        main(
            [
                "run",
                "dqn",
                "--no-progress",
                "--max-steps",
                "500",
                "--run-dir",
                str(tmp_path / "run"),
                "--checkpoint-dir",
                str(tmp_path / "ckpt"),
            ]
        )
    assert done.value.code == 2
    assert "not an experiment checkpoint directory" in capsys.readouterr().err
    assert (tmp_path / "ckpt" / "results.csv").read_text() == "1,2\n"


def test_ctrl_c_during_a_run_saves_a_checkpoint_that_loads_then_exits_130_and_says_how_to_resume(
    monkeypatch, capsys, tmp_path
):
    """Ctrl-C (SIGINT to this process, once the run has acted for a while) stops the run at its next check after
    saving a checkpoint, which loads; the command exits 130 naming the step and how to resume. Without
    --checkpoint-dir, Ctrl-C stops the run at once."""
    from acme.experiments.schedule import Schedule
    from acme.utils.checkpoint_files import Checkpointer

    reached = Schedule.reached

    def ctrl_c_after_acting(self, *args):
        reached(self, *args)
        os.kill(os.getpid(), signal.SIGINT)  # what the terminal sends on Ctrl-C

    monkeypatch.setattr(Schedule, "reached", ctrl_c_after_acting)
    flags = ["--max-steps", "100000", "--eval-every", "0", "--no-progress", "--set", "hidden_sizes=16"]
    checkpoints = tmp_path / "checkpoints"
    assert main(["run", "dqn", *flags, "--run-dir", str(tmp_path / "run"), "--checkpoint-dir", str(checkpoints)]) == 130
    out, err = capsys.readouterr()
    assert "Ctrl-C: saving a checkpoint at the next check, then stopping" in out
    checkpointer = Checkpointer(str(checkpoints))
    assert len(checkpointer.list_checkpoints()) == 1  # the one saved for Ctrl-C (a periodic one is 10 minutes off)
    state, _, metadata = checkpointer.restore_latest()
    actor_steps = metadata["counts"]["actor_steps"]
    assert 0 < actor_steps < 100_000 and state is not None, metadata
    assert err.strip() == (
        f"Stopped by Ctrl-C at actor step {actor_steps}, after a checkpoint. The same command resumes from the newest "
        f"checkpoint in {checkpoints}."
    )
    assert main(["run", "dqn", *flags, "--run-dir", str(tmp_path / "unsaved")]) == 130
    assert capsys.readouterr().err.strip() == "Stopped by Ctrl-C."


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "dqn", "--max-steps", "0"],
            "argument --max-steps: must be an integer >= 1 and at most 2,147,483,647, got 0.",
        ),
        (
            ["run", "dqn", "--max-steps", "-5"],
            "argument --max-steps: must be an integer >= 1 and at most 2,147,483,647, got -5.",
        ),
        (
            ["run", "dqn", "--max-steps", "1e5"],
            "argument --max-steps: must be an integer >= 1 and at most 2,147,483,647, got '1e5'.",
        ),
        (
            ["run", "dqn", "--eval-episodes", "0"],
            "argument --eval-episodes: must be an integer >= 1 and at most 1,048,576, got 0.",
        ),
        (
            ["run", "dqn", "--eval-every", "-1"],
            "argument --eval-every: must be an integer >= 0 and at most 2,147,483,647 (0: no evaluation), got -1.",
        ),
        (["run", "dqn", "--log-every", "-1"], "argument --log-every: must be a number >= 0 (0: every row), got -1."),
        (["run", "dqn", "--log-every", "inf"], "argument --log-every: must be a number >= 0 (0: every row), got inf."),
        (["run", "dqn", "--num-actors", "0"], "--num-actors must be an integer >= 1 and at most 65,536, got 0."),
        (
            ["run", "dqn", "--checkpoint-every-minutes", "0"],
            "argument --checkpoint-every-minutes: must be a number > 0, got 0.",
        ),
        (
            ["run", "dqn", "--checkpoint-every-steps", "0"],
            "argument --checkpoint-every-steps: must be an integer >= 1 and at most 2,147,483,647, got 0.",
        ),
        (
            ["run", "dqn", "--keep-checkpoints", "-2"],
            "argument --keep-checkpoints: must be an integer >= 1 and at most 1,048,576, got -2.",
        ),
        (["run", "dqn", "--seed", "-1"], "argument --seed: must be an integer >= 0 and at most 4,294,967,295, got -1."),
        (
            ["run", "dqn", "--seed", "4294967296"],
            "argument --seed: must be an integer >= 0 and at most 4,294,967,295, got 4294967296.",
        ),
        (
            ["evaluate", "--snapshot", "x", "--episodes", "0"],
            "argument --episodes: must be an integer >= 1 and at most 1,048,576, got 0.",
        ),
        (
            ["evaluate", "--snapshot", "x", "--seed", "-3"],
            "argument --seed: must be an integer >= 0 and at most 4,294,967,295",
        ),
        (
            ["reproduce", "dqn", "--env", "gymnasium:CartPole-v1", "--max-steps", "0"],
            "argument --max-steps: must be an integer >= 1 and at most 2,147,483,647, got 0.",
        ),
        (
            ["reproduce", "dqn", "--env", "gymnasium:CartPole-v1", "--seeds", "0", "-1"],
            "argument --seeds: must be an integer >= 0 and at most 4,294,967,295, got -1.",
        ),
    ],
)
def test_counts_out_of_range_are_refused_before_anything_runs(tmp_path, capsys, argv, message):
    """Zero is never read as 'use the default': out-of-range counts exit 2, as argparse errors do."""
    with pytest.raises(SystemExit) as done:
        main([*argv, *(["--run-dir", str(tmp_path / "run")] if argv[0] == "run" else [])])
    assert done.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_registry_keeps_given_zero_instead_of_the_default():
    from baselines import registry

    with pytest.raises(ValueError, match="max_num_actor_steps must be >= 1, got 0"):
        registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", max_steps=0)
    with pytest.raises(ValueError, match="num_eval_episodes must be >= 1, got 0"):
        registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", num_eval_episodes=0)
    config = registry.make_experiment_config("dqn", "gymnasium:Acrobot-v1", eval_every=0)
    assert config.eval_every == 0 and config.max_num_actor_steps == registry.DEFAULT_MAX_STEPS


def test_help_shows_each_default(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for expected in (
        "random seed (default: 0)",
        "(default: 5.0)",
        "checkpoints to keep (default: 3)",
        "minutes between checkpoints (default: 10.0)",
        "(default: 2)",
        "(default: the tuned baseline's budget, else 100000)",
        "(default: gymnasium:CartPole-v1)",
    ):
        assert expected in out, expected
    for command in ("evaluate", "reproduce"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert ("episodes to run (default: 10)" if command == "evaluate" else "(default: runs/reproduce)") in out


def test_a_run_refused_after_its_config_is_built_leaves_no_run_folder(tmp_path, capsys):
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit) as done:
        main(
            [
                "run",
                "dqn",
                "--no-progress",
                "--max-steps",
                "500",
                "--run-dir",
                str(tmp_path / "runs" / "one"),
                "--checkpoint-dir",
                str(tmp_path / "ckpt"),
            ]
        )
    assert done.value.code == 2
    assert "not an experiment checkpoint directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]


def test_a_refused_run_keeps_a_run_folder_the_user_made(tmp_path, capsys, monkeypatch):
    import acme.experiments

    def refused(config, options, progress):
        raise ValueError("refused")

    monkeypatch.setattr(acme.experiments, "run", refused)
    (tmp_path / "mine").mkdir()
    with pytest.raises(SystemExit):
        main(["run", "dqn", "--no-progress", "--run-dir", str(tmp_path / "mine")])
    assert (tmp_path / "mine").is_dir()
    assert "error: refused" in capsys.readouterr().err


def test_evaluate_accepts_a_run_directory_and_says_it_uses_its_policy(tmp_path, capsys, monkeypatch):
    import baselines.policy_export

    seen = []
    monkeypatch.setattr(
        baselines.policy_export,
        "evaluate_snapshot",
        lambda directory, episodes, seed: seen.append(directory) or [1.0] * episodes,
    )
    (tmp_path / "policy").mkdir()
    assert main(["evaluate", "--snapshot", str(tmp_path), "--episodes", "2"]) == 0
    assert seen == [str(tmp_path / "policy")]
    assert (
        f"{tmp_path} is a run directory; evaluating its policy snapshot {tmp_path / 'policy'}"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--replay", "local", "--launcher", "ray"], "--replay local keeps the tables inside one process"),
        (["--replay", "sqlite"], "argument --replay: invalid choice: 'sqlite'"),
        (["--replay", "learner"], "--replay learner is for distributed runs"),
        (["--num-envs", "0"], "--num-envs must be an integer >= 1 and at most 1,048,576, got 0."),
    ],
)
def test_bad_replay_and_environment_flags_are_clear_errors(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--no-progress", "--run-dir", str(tmp_path / "run"), *flags])
    assert done.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_run_takes_the_baselines_environments_per_actor_unless_told(tmp_path, capsys):
    # PPO's CartPole baseline drives 8 environments per actor; --num-envs overrides it.
    common = ["--max-steps", "512", "--eval-every", "0", "--no-progress"]
    assert main(["run", "ppo", *common, "--run-dir", str(tmp_path / "a")]) == 0
    assert "(local replay, 8 environments)" in capsys.readouterr().out
    assert main(["run", "ppo", *common, "--num-envs", "1", "--run-dir", str(tmp_path / "b")]) == 0
    assert "environments)" not in capsys.readouterr().out
