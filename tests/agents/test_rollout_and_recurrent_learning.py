"""IMPALA and R2D2 really learn CartPole in one process (slow: about a minute or two each on 2 cores)."""

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config


@pytest.mark.slow
@pytest.mark.parametrize("agent, max_steps", [("impala", 150_000), ("r2d2", 120_000)])
def test_agent_solves_cartpole(agent, max_steps):
    config = make_experiment_config(
        agent,
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=max_steps,
        eval_every=10_000,
        num_eval_episodes=10,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(config, progress=False, stop_at_return=475.0)
    reached = result.first_reaching(475.0)
    curve = [(e.actor_steps, round(e.mean_return, 1)) for e in result.evaluations]
    assert reached is not None, f"{agent} never reached a mean evaluation return of 475 on CartPole: {curve}"
