"""Writes the checkpoints in this folder: one small checkpointed run per agent, 200 actor steps each.

They were written by commit e3ceb92, the last before issue #16's refactor renamed
and shared the learner state types (DQN's ``TrainingState`` became
``acme.jax.value_learning.TargetNetworkState``; TD3's and D4PG's the shared
``ActorCriticState``), so ``tests/experiments/test_checkpoints_before_16.py`` can
show that a run checkpointed before the refactor resumes after it. To write them
again from that commit::

    git worktree add /tmp/before-16 e3ceb92
    PYTHONPATH=/tmp/before-16 .venv/bin/python tests/data/checkpoints_before_16/write_checkpoints.py OUT
"""

from __future__ import annotations

import dataclasses
import sys

from acme.experiments import CheckpointingConfig, ExperimentConfig
from acme.utils import loggers
from baselines.registry import make_experiment_config

_SMALL = dict(min_replay_size=50, batch_size=8, samples_per_insert=8.0)
_ACTOR_CRITIC = dict(policy_hidden_sizes=(8, 8), critic_hidden_sizes=(8, 8), **_SMALL)
RUNS = {
    "dqn": ("gymnasium:CartPole-v1", dict(hidden_sizes=(8, 8), **_SMALL)),
    "sac": ("gymnasium:Pendulum-v1", _ACTOR_CRITIC),
    "td3": ("gymnasium:Pendulum-v1", _ACTOR_CRITIC),
    "d4pg": ("gymnasium:Pendulum-v1", dict(num_atoms=11, **_ACTOR_CRITIC)),
    "mpo": ("gymnasium:Pendulum-v1", _ACTOR_CRITIC),
}
ACTOR_STEPS = 200


def make_config(agent: str, directory: str, max_steps: int) -> ExperimentConfig:
    """The small run of ``agent``, checkpointed into ``directory`` (only at its end: the newest one kept)."""
    environment, overrides = RUNS[agent]
    config = make_experiment_config(
        agent,
        environment,
        seed=0,
        max_steps=max_steps,
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides=overrides,
    )
    checkpointing = CheckpointingConfig(directory, every_minutes=None, every_learner_steps=10_000, keep=1)
    return dataclasses.replace(config, checkpointing=checkpointing)


if __name__ == "__main__":
    from acme.experiments import run_experiment

    for name in RUNS:
        run_experiment(make_config(name, f"{sys.argv[1]}/{name}", ACTOR_STEPS), progress=False)
