"""DQN really learns CartPole (slow: about a minute or two on 2 cores)."""

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config


@pytest.mark.slow
def test_dqn_solves_cartpole():
    config = make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=60_000,
        eval_every=2_500,
        num_eval_episodes=10,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(config, progress=False, stop_at_return=475.0)
    reached = result.first_reaching(475.0)
    curve = [(e.actor_steps, round(e.mean_return, 1)) for e in result.evaluations]
    assert reached is not None, f"DQN never reached a mean evaluation return of 475 on CartPole: {curve}"
