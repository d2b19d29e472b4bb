"""Every agent as a user runs it from the command line: a checkpointed run, the same command with a larger budget
resuming it, and the finished run's policy snapshot evaluated.

The agents another test already runs this way from the command line are named with that test (``RUN_ELSEWHERE``);
the rest run here at a tiny budget, in this process (its compilations shared between the run and its resume).
A new agent must be added to one or the other (``test_every_agent_is_run_from_the_command_line``).
"""

from __future__ import annotations

import json

import pytest

from acme.testing.experts import CARTPOLE, PENDULUM, write_pendulum_expert_dataset
from baselines import registry
from baselines.cli import main

SMALL_MLPS = ("policy_hidden_sizes=32", "critic_hidden_sizes=32")
DATASET = "<dataset>"  # replaced by the module's Pendulum dataset

RUN_ELSEWHERE = {  # agent: the test that checkpoints, resumes and evaluates it from the command line
    "dqn": "tests/test_run_matrix.py",
    "bc": "tests/test_run_matrix.py",
    "ppo": "tests/anakin/test_runs.py",
    "sac": "tests/baselines/test_environment_families.py",
    "td3": "tests/baselines/test_environment_families.py",
    "r2d2": "tests/baselines/test_environment_families.py",
}

# agent: (environment flags, --set overrides, first budget, resumed budget); online budgets count actor steps,
# offline ones (a --dataset) learner steps. A checkpoint every 10 learner steps: the first run ends with one.
RUN_HERE = {
    "c51": ([CARTPOLE], ("min_replay_size=100", "num_sgd_steps_per_step=4"), 400, 600),
    "mdqn": ([CARTPOLE], ("min_replay_size=100", "num_sgd_steps_per_step=4"), 400, 600),
    "qrdqn": ([CARTPOLE], ("min_replay_size=100", "num_sgd_steps_per_step=4"), 400, 600),
    "impala": ([CARTPOLE], ("hidden_sizes=16",), 400, 600),
    "pqn": ([CARTPOLE], ("hidden_sizes=16",), 600, 900),
    "d4pg": ([PENDULUM], ("min_replay_size=100", "batch_size=32", *SMALL_MLPS), 300, 400),
    "mpo": ([PENDULUM], ("min_replay_size=100", "batch_size=32", *SMALL_MLPS), 300, 400),
    "cql": ([PENDULUM, "--dataset", DATASET], ("batch_size=32", "num_action_samples=2", *SMALL_MLPS), 20, 40),
    "iql": ([PENDULUM, "--dataset", DATASET], ("batch_size=32", *SMALL_MLPS), 20, 40),
    "td3_bc": ([PENDULUM, "--dataset", DATASET], ("batch_size=32", *SMALL_MLPS), 20, 40),
}


def test_every_agent_is_run_from_the_command_line():
    assert not set(RUN_ELSEWHERE) & set(RUN_HERE)
    assert set(RUN_ELSEWHERE) | set(RUN_HERE) == set(registry.AGENT_LOADERS)


@pytest.fixture(scope="module")
def pendulum_dataset(tmp_path_factory) -> str:
    return write_pendulum_expert_dataset(str(tmp_path_factory.mktemp("datasets") / "pendulum-expert"), episodes=2)


@pytest.mark.parametrize("agent", sorted(RUN_HERE))
def test_a_run_resumes_from_its_checkpoint_and_its_snapshot_evaluates(agent, pendulum_dataset, tmp_path, capsys):
    environment, overrides, first, resumed = RUN_HERE[agent]
    environment = [pendulum_dataset if flag == DATASET else flag for flag in environment]
    checkpoints = tmp_path / "checkpoints"
    command = ["run", agent, "--env", *environment, "--eval-episodes", "1", "--no-progress"]
    command += [flag for override in overrides for flag in ("--set", override)]
    command += ["--checkpoint-dir", str(checkpoints), "--checkpoint-every-steps", "10", "--eval-every", str(first)]

    assert main([*command, "--max-steps", str(first), "--run-dir", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    assert main([*command, "--max-steps", str(resumed), "--run-dir", str(tmp_path / "b")]) == 0
    assert f"Resuming from checkpoint {checkpoints}/ckpt-" in capsys.readouterr().out
    result = json.loads((tmp_path / "b" / "result.json").read_text())
    counted = "learner_steps" if "--dataset" in environment else "actor_steps"
    assert result[counted] >= resumed and result["learner_steps"] > 0, result
    counts = [evaluation[counted] for evaluation in result["evaluations"]]  # the first run's evaluation, kept
    assert len(counts) == 2 and first <= counts[0] < resumed <= counts[1], result["evaluations"]

    assert main(["evaluate", "--snapshot", str(tmp_path / "b" / "policy"), "--episodes", "1"]) == 0
    assert "mean return over 1 episodes" in capsys.readouterr().out
