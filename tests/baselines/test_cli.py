"""The baselines command line."""

import json

import pytest

from baselines.cli import main


def test_help_lists_agents_environments_and_options(capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for expected in ("dqn", "gymnasium:CartPole-v1", "bsuite:", "dm_control:", "--max-steps", "--seed",
                     "--launcher", "--num-actors", "--ray-address"):
        assert expected in out


def test_run_writes_logs_curve_and_final_line(tmp_path, capsys):
    code = main(["run", "dqn", "--env", "gymnasium:CartPole-v1", "--seed", "1", "--max-steps", "1500",
                 "--eval-every", "750", "--eval-episodes", "2", "--run-dir", str(tmp_path), "--no-progress"])
    assert code == 0
    for name in ("actor.csv", "learner.csv", "evaluator.csv", "result.json", "learning_curve.png"):
        assert (tmp_path / name).exists(), name
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["actor_steps"] == 1500 and result["learner_steps"] > 0
    assert [e["actor_steps"] >= 750 for e in result["evaluations"]] == [True, True]
    assert len((tmp_path / "actor.csv").read_text().splitlines()) > 10  # one row per episode
    assert "Best evaluation return" in capsys.readouterr().out


def test_unknown_environment_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--env", "gymnasium:NoSuchEnv-v0", "--no-progress", "--run-dir", str(tmp_path / "run")])
    assert done.value.code == 2
    assert "gymnasium has no environment 'NoSuchEnv-v0'" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_run_checkpoints_resumes_and_exports_a_snapshot(tmp_path, capsys):
    checkpoints = tmp_path / "ckpt"
    common = ["run", "dqn", "--env", "gymnasium:CartPole-v1", "--eval-every", "500", "--eval-episodes", "2",
              "--no-progress", "--checkpoint-dir", str(checkpoints), "--checkpoint-every-steps", "100"]
    assert main([*common, "--max-steps", "1000", "--run-dir", str(tmp_path / "first")]) == 0
    out = capsys.readouterr().out
    assert f"Checkpoints go to {checkpoints}" in out and "Checkpoint saved" in out
    assert main([*common, "--max-steps", "1500", "--run-dir", str(tmp_path / "second")]) == 0
    out = capsys.readouterr().out
    assert f"Resuming from checkpoint {checkpoints}/ckpt-" in out and "actor steps 1000" in out
    result = json.loads((tmp_path / "second" / "result.json").read_text())
    assert result["actor_steps"] == 1500
    assert [e["actor_steps"] for e in result["evaluations"]][:2] == [
        e["actor_steps"] for e in json.loads((tmp_path / "first" / "result.json").read_text())["evaluations"]][:2]
    snapshot = tmp_path / "second" / "policy"
    assert f"--snapshot {snapshot}" in out
    assert main(["evaluate", "--snapshot", str(snapshot), "--episodes", "2"]) == 0
    assert "mean return over 2 episodes" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--keep-checkpoints", "0"], "keep must be an integer >= 1"),
        (["--checkpoint-every-minutes", "-1"], "every_minutes must be a positive number"),
    ],
)
def test_bad_checkpoint_flags_are_clear_errors(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--no-progress", "--run-dir", str(tmp_path / "run"),
              "--checkpoint-dir", str(tmp_path / "ckpt"), *flags])
    assert done.value.code == 2
    assert message in capsys.readouterr().err


def test_a_checkpoint_dir_holding_other_files_is_refused(tmp_path, capsys):
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "results.csv").write_text("1,2\n")
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--no-progress", "--max-steps", "500", "--run-dir", str(tmp_path / "run"),
              "--checkpoint-dir", str(tmp_path / "ckpt")])
    assert done.value.code == 2
    assert "not an experiment checkpoint directory" in capsys.readouterr().err
    assert (tmp_path / "ckpt" / "results.csv").read_text() == "1,2\n"


def test_ctrl_c_during_run_exits_130_and_says_how_to_resume(monkeypatch, capsys, tmp_path):
    import baselines.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt("stopped by Ctrl-C at actor step 1045, after a checkpoint")

    monkeypatch.setattr(cli, "run_command", interrupted)
    assert main(["run", "dqn", "--checkpoint-dir", str(tmp_path)]) == 130
    assert capsys.readouterr().err.strip() == (
        f"Stopped by Ctrl-C at actor step 1045, after a checkpoint. The same command resumes from the newest "
        f"checkpoint in {tmp_path}.")
    monkeypatch.setattr(cli, "run_command", lambda args: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert main(["run", "dqn"]) == 130
    assert capsys.readouterr().err.strip() == "Stopped by Ctrl-C."
