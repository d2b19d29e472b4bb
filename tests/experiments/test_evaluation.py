"""The evaluator runs its episodes side by side (one batched policy call per step) and returns what one
environment per episode, stepped alone, would."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from acme import specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments import ExperimentConfig
from acme.experiments.evaluation import Evaluator, side_by_side_episode_returns
from acme.experiments.seeding import ExperimentSeeds
from acme.testing import fakes
from acme.utils import loggers
from agents import dqn
from baselines import registry

SPEC = fakes.discrete_spec()


def _dqn_parts():
    config = dqn.DQNConfig(hidden_sizes=(16,), batch_size=8, min_replay_size=20, num_sgd_steps_per_step=1)
    builder = dqn.DQNBuilder(config)
    networks = dqn.make_networks(SPEC, config.hidden_sizes)
    learner = builder.make_learner(
        jax.random.PRNGKey(0), networks, iter(()), lambda *a, **k: loggers.NoOpLogger(), SPEC
    )
    return builder, networks, learner


def test_episodes_of_different_lengths_each_run_once_and_the_finished_wait():
    builder, networks, learner = _dqn_parts()
    policy = builder.make_policy(networks, SPEC, evaluation=True)
    lengths = [3, 7, 5]
    environments = [fakes.FakeEnvironment(SPEC, episode_length=n) for n in lengths]
    actor = builder.make_actor(list(jax.random.split(jax.random.PRNGKey(1), 3)), policy, SPEC, learner)
    returns = side_by_side_episode_returns(environments, actor)
    assert returns == [float(sum(range(1, n + 1))) for n in lengths]  # rewards 1..n
    assert [e.num_steps for e in environments] == lengths  # no step after an episode's end
    assert [e.num_episodes for e in environments] == [1, 1, 1]
    with pytest.raises(ValueError, match="drives 3 environments but 2 were given"):
        side_by_side_episode_returns(environments[:2], actor)


def _cartpole_experiment(num_eval_episodes: int) -> ExperimentConfig:
    return registry.make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        seed=3,
        max_steps=100,
        eval_every=100,
        num_eval_episodes=num_eval_episodes,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides={"hidden_sizes": (32,)},
    )


def test_side_by_side_returns_equal_each_episode_stepped_alone_in_its_own_environment():
    """Episode i is what a single actor with key i, in an environment with seed i, returns on its own."""
    experiment = _cartpole_experiment(num_eval_episodes=4)
    environment = experiment.environment_factory(0)
    spec = specs.make_environment_spec(environment)
    networks = experiment.network_factory(spec)
    builder = experiment.builder
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), experiment.get_logger_factory(), spec)
    evaluator = Evaluator(experiment, spec, networks, learner)
    together = evaluator.evaluate(100, dict, lambda: 0.0)

    seeds = ExperimentSeeds(experiment.seed)
    policy = builder.make_policy(networks, spec, evaluation=True)
    alone = []
    for key, seed in zip(seeds.evaluator_keys(4), seeds.evaluator_environment_seeds(4)):
        actor = builder.make_actor([key], policy, spec, variable_source=learner)
        loop = EnvironmentLoop(experiment.environment_factory(seed), actor, logger=loggers.NoOpLogger())
        alone += loop.episode_returns(1)
    assert together.mean_return == pytest.approx(np.mean(alone))
    assert together.std_return == pytest.approx(np.std(alone))
    assert len(set(alone)) > 1  # four different episodes, not one repeated


def test_the_evaluators_first_environment_and_key_are_those_of_one_environment():
    seeds = ExperimentSeeds(7)
    assert seeds.evaluator_environment_seeds(1) == [seeds.evaluator_environment_seed()]
    assert seeds.evaluator_environment_seeds(3)[0] == seeds.evaluator_environment_seed()
    assert len(set(seeds.evaluator_environment_seeds(3))) == 3
    assert np.array_equal(seeds.evaluator_keys(1)[0], seeds.evaluator_key())
    keys = np.asarray(seeds.evaluator_keys(3))
    assert keys.shape == (3, 2) and len({tuple(k) for k in keys}) == 3
