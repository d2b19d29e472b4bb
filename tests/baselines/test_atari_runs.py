"""The pixel agents on ``atari:Pong`` from the command line: a short run each exercises the convolutional torso,
uint8 observations through the actor, replay or rollouts, and the learner (no learning is claimed); DQN's runs four
games at once in ale-py's vector environment. DQN's run of one game, with checkpoints, a resume and its snapshot,
is in ``test_environment_families.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (steps, --set overrides): PPO's update of two conv torsos costs seconds on a CPU core, so its run is shorter.
SMALL = {
    "r2d2": (
        1000,
        ("batch_size=4", "min_replay_size=8", "max_replay_size=100", "burn_in_length=2", "trace_length=6")
        + ("sequence_period=4", "lstm_size=32", "samples_per_insert=1.0", "num_sgd_steps_per_step=1"),
    ),
    "impala": (400, ("batch_size=2", "unroll_length=16")),
    "ppo": (400, ("batch_size=2", "unroll_length=32", "num_epochs=1")),
    # --num-envs 4: the four games step together in ale-py's C++ vector environment (AtariVectorBatch).
    "dqn": (600, ("min_replay_size=200", "max_replay_size=600", "batch_size=8", "samples_per_insert=0.5")),
}


@pytest.mark.parametrize("agent", sorted(SMALL))
def test_a_pixel_agent_runs_on_pong_from_the_command_line(tmp_path, agent):
    run_dir = tmp_path / "run"
    steps, overrides = SMALL[agent]
    command = [sys.executable, "-m", "baselines", "run", agent, "--env", "atari:Pong", "--max-steps", str(steps)]
    command += ["--eval-every", "0", "--no-progress", "--run-dir", str(run_dir)]
    command += [flag for override in overrides for flag in ("--set", override)]
    command += ["--num-envs", "4"] if agent == "dqn" else []
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    summary = json.loads((run_dir / "result.json").read_text())
    assert summary["actor_steps"] == steps and summary["learner_steps"] > 0, summary
    config = (run_dir / "config.yaml").read_text()
    assert "torso: auto" in config


def test_dqn_on_any_atari_game_takes_the_registered_atari_settings_and_other_ids_do_not():
    from baselines import registry

    atari = registry.ATARI_CONFIG_OVERRIDES["dqn"]
    for game in ("atari:Pong", "atari:Breakout?sticky_action_probability=0"):
        config = registry.make_agent_config("dqn", game, {"learning_rate": 1e-4})
        assert config.learning_rate == 1e-4  # what the user sets goes over them
        assert config.max_abs_reward == 1.0 and config.n_step == 1 and config.target_update_period == 2_000
        assert config.samples_per_insert / config.batch_size == 0.25  # one update every 4 agent steps
        assert all(getattr(config, field) == value for field, value in atari.items() if field != "learning_rate")
    assert registry.make_agent_config("dqn", "gymnasium:CartPole-v1").max_abs_reward is None
    assert registry.find_baseline("ppo", "atari:Pong") is None  # no Atari settings registered for PPO
    assert registry.find_baseline("dqn", "atari:Pong").target_return == -18.0
