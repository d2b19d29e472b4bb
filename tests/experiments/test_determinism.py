"""The same seed in one process gives the same run: evaluation returns and learner steps, bit for bit."""

import pytest

from acme.experiments import run_experiment
from baselines import registry

# Short budgets past each agent's minimum replay size, so the learner has updated before the evaluations.
RUNS = [("dqn", "gymnasium:CartPole-v1", 2_000, 1_000), ("sac", "gymnasium:Pendulum-v1", 1_100, 550)]


def _evaluations(agent, environment, max_steps, eval_every, seed):
    config = registry.make_experiment_config(
        agent, environment, seed=seed, max_steps=max_steps, eval_every=eval_every, num_eval_episodes=3
    )
    result = run_experiment(config, progress=False)
    return [(e.actor_steps, e.mean_return) for e in result.evaluations], result.learner_steps


@pytest.mark.parametrize("agent, environment, max_steps, eval_every", RUNS, ids=[r[0] for r in RUNS])
def test_a_second_run_with_the_same_seed_evaluates_the_same(agent, environment, max_steps, eval_every):
    first, first_updates = _evaluations(agent, environment, max_steps, eval_every, seed=3)
    second, second_updates = _evaluations(agent, environment, max_steps, eval_every, seed=3)
    assert first_updates > 0, "the learner never updated: the budget is below the minimum replay size"
    assert second == first and second_updates == first_updates
    other, _ = _evaluations(agent, environment, max_steps, eval_every, seed=4)
    assert other != first, "another seed evaluated the same: the seed does not reach the run"
