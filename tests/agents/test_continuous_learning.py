"""Each continuous-control agent really learns Pendulum (slow: one to three minutes per agent on 2 cores).

The run uses the registered baseline (the config whose results are reported) and
stops at the first evaluation whose mean return reaches the target.
"""

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines import registry

TARGET = -200.0


@pytest.mark.slow
@pytest.mark.parametrize("agent", registry.CONTINUOUS_AGENTS)
def test_agent_learns_pendulum(agent):
    config = registry.make_experiment_config(
        agent,
        "gymnasium:Pendulum-v1",
        seed=0,
        max_steps=20_000,
        eval_every=1_000,
        num_eval_episodes=5,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(config, progress=False, stop_at_return=TARGET)
    curve = [(e.actor_steps, round(e.mean_return, 1)) for e in result.evaluations]
    reached = result.first_reaching(TARGET)
    assert reached is not None, f"{agent} never reached a mean evaluation return of {TARGET} on Pendulum: {curve}"
