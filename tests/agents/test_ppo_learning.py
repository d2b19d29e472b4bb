"""PPO really learns CartPole with 8 environments per actor (slow: under a minute on 2 cores)."""

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config


@pytest.mark.slow
def test_ppo_solves_cartpole():
    config = make_experiment_config(
        "ppo",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=100_000,
        eval_every=5_000,
        num_eval_episodes=10,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    assert config.num_envs_per_actor == 8  # the registered baseline's
    result = run_experiment(config, progress=False, stop_at_return=475.0)
    reached = result.first_reaching(475.0)
    curve = [(e.actor_steps, round(e.mean_return, 1)) for e in result.evaluations]
    assert reached is not None, f"PPO never reached a mean evaluation return of 475 on CartPole: {curve}"
