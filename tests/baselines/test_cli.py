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
