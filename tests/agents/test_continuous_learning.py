"""D4PG and MPO really learn Pendulum on the host loop (slow: about a minute each on 2 cores).

The run uses the registered baseline (the config whose results are reported) and
stops at the first evaluation whose mean return reaches the target. SAC's and
TD3's losses are the ones their on-device runs learn Pendulum with
(tests/anakin/test_runs.py), and the host loop's transition path (adder, replay,
fused updates) is the one D4PG and MPO learn through here, so SAC and TD3 are
not run here a second time.
"""

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines import registry

TARGET = -200.0


@pytest.mark.slow
@pytest.mark.parametrize("agent", [agent for agent in registry.CONTINUOUS_AGENTS if agent not in ("sac", "td3")])
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
