"""A small checkpointed DQN run, started as a subprocess by the kill-and-resume tests.

``python -m tests.experiments.resumable_run CHECKPOINT_DIR MAX_STEPS [EVERY_LEARNER_STEPS [REPLAY]]``
(REPLAY: local, the default, or reverb)
"""

from __future__ import annotations

import dataclasses
import sys

from acme.experiments import CheckpointingConfig, ExperimentConfig
from acme.utils import loggers
from baselines.registry import make_experiment_config

SMALL_DQN = dict(
    hidden_sizes=(32, 32), min_replay_size=100, batch_size=32, samples_per_insert=8.0, epsilon_decay_steps=1_000
)


def make_config(directory: str, max_steps: int, every_learner_steps: int = 50, **overrides) -> ExperimentConfig:
    """DQN on CartPole, checkpointed every ``every_learner_steps`` learner steps into ``directory``."""
    config = make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=max_steps,
        eval_every=400,
        num_eval_episodes=2,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides={**SMALL_DQN, **overrides},
    )
    checkpointing = CheckpointingConfig(directory, every_minutes=None, every_learner_steps=every_learner_steps)
    return dataclasses.replace(config, checkpointing=checkpointing)


if __name__ == "__main__":
    from acme.experiments import run_experiment

    every = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    replay = sys.argv[4] if len(sys.argv) > 4 else "local"
    run_experiment(make_config(sys.argv[1], int(sys.argv[2]), every_learner_steps=every), progress=False, replay=replay)
