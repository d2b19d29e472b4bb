"""PQN's own pieces: its config, the decaying step size, its Q(lambda) targets, its policy, and learning on the device
(the rollout queue and actor it shares with PPO are tested in test_rollout_agents.py)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme.adders import Step
from acme.experiments import RunOptions, run
from acme.jax.optimization import clipped_adam
from acme.replay.local import ReplaySample, SampleInfo
from acme.testing import fakes
from acme.utils import loggers
from agents.pqn import PQNConfig
from baselines import registry

TINY = dict(hidden_sizes=(8,), unroll_length=4, batch_size=2, num_epochs=2, num_minibatches=2)
SPEC = fakes.discrete_spec(obs_shape=(3,), num_actions=3)


def _no_logs(label, steps_key=None):
    return loggers.NoOpLogger()


def _parts(**overrides):
    entry = registry.get_agent("pqn")
    config = entry.make_config(**{**TINY, **overrides})
    return config, entry.make_builder(config), entry.make_networks(SPEC, config)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("q_lambda", 1.5, r"q_lambda must be in \[0, 1\]"),
        ("reward_scale", 0.0, "reward_scale must be > 0"),
        ("learning_rate_decay_steps", -1, "learning_rate_decay_steps must be an integer >= 0"),
        ("evaluation_actions", "sample", "evaluation_actions must stay 'mode'"),
        ("num_minibatches", 3, r"num_minibatches \(3\) must divide batch_size \* unroll_length \(8\)"),
        ("epsilon_end", 1.5, "epsilon_end must be"),
    ],
)
def test_invalid_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        PQNConfig(**{**TINY, field: value})


def test_a_decay_must_end_below_where_it_starts_and_a_constant_step_size_ignores_its_end():
    with pytest.raises(ValueError, match=r"final_learning_rate \(1.0\) must be at most learning_rate"):
        PQNConfig(**{**TINY, "final_learning_rate": 1.0, "learning_rate_decay_steps": 10})
    assert PQNConfig(**{**TINY, "learning_rate": 1e-12}).learning_rate == 1e-12  # no decay: its end is unused


def test_replace_keeps_validation():
    with pytest.raises(ValueError, match="q_lambda"):
        dataclasses.replace(PQNConfig(), q_lambda=-0.1)


def test_the_step_size_decays_linearly_to_the_final_one_and_stays_there():
    config = PQNConfig(learning_rate=1e-3, final_learning_rate=1e-5, learning_rate_decay_steps=2)
    optimizer = clipped_adam(config)
    params = jnp.zeros(1)
    state = optimizer.init(params)
    steps = []
    for _ in range(4):  # a constant gradient: Adam's update is the step size itself
        updates, state = optimizer.update(jnp.full(1, 0.1), state, params)
        steps.append(-float(updates[0]))
    np.testing.assert_allclose(steps, [1e-3, (1e-3 + 1e-5) / 2, 1e-5, 1e-5], rtol=1e-3)
    constant = clipped_adam(PQNConfig(learning_rate=1e-3))
    updates, _ = constant.update(jnp.full(1, 0.1), constant.init(params), params)
    assert float(updates[0]) == pytest.approx(-1e-3, rel=1e-3)


def _batch() -> Step:
    """Two rollouts of five steps; the second holds an episode's final step at index 2."""
    rng = np.random.default_rng(0)
    shape = (2, 5)
    start = np.zeros(shape, bool)
    start[1, 3] = True
    return Step(
        observation=rng.normal(size=(*shape, 3)).astype(np.float32),
        action=rng.integers(0, 3, shape).astype(np.int32),
        reward=rng.normal(size=shape).astype(np.float32),
        discount=np.ones(shape, np.float32),
        start_of_episode=start,
        extras={"policy_step": np.zeros(shape, np.int32)},
    )


def _learner(batch: Step, **overrides):
    _, builder, networks = _parts(**overrides)
    sample = ReplaySample(SampleInfo(*(np.zeros(2) for _ in SampleInfo._fields)), batch)
    return builder.make_learner(jax.random.PRNGKey(0), networks, iter(lambda: sample, None), _no_logs, SPEC)


def test_the_targets_are_one_step_q_learning_targets_at_lambda_zero():
    batch = _batch()
    config, builder, networks = _parts(q_lambda=0.0, reward_scale=0.5, discount=0.9)
    state = builder.learner.make_initial_state(networks, config, jax.random.PRNGKey(0))
    _, metrics = builder.learner.make_update(networks, config)(state, jax.tree.map(jnp.asarray, batch))
    next_q = networks.q_network.apply(state.params, batch.observation[:, 1:].reshape(-1, 3))
    next_values = np.max(next_q, axis=-1).reshape(2, 4)
    targets = 0.5 * batch.reward[:, :4] + 0.9 * next_values
    acted = ~batch.start_of_episode[:, 1:]  # the final step (row 1, index 2) carries no loss
    assert not acted[1, 2] and acted.sum() == 7
    np.testing.assert_allclose(float(metrics["mean_target"]), targets[acted].mean(), rtol=1e-5)


def test_one_learner_step_changes_every_parameter_and_keeps_the_loss_finite():
    learner = _learner(_batch())
    before = jax.tree.leaves(jax.device_get(learner.state.params))
    learner.step()
    learner.check_finite()
    after = jax.tree.leaves(jax.device_get(learner.state.params))
    assert all(not np.allclose(a, b) for a, b in zip(before, after))
    assert int(learner.state.steps) == 1


def test_evaluation_acts_greedily_and_training_stores_the_learner_step():
    config, builder, networks = _parts(epsilon_start=0.0, epsilon_end=0.0)
    params = networks.init(jax.random.PRNGKey(0))
    statistics = builder.learner.make_initial_state(networks, config, jax.random.PRNGKey(0)).observation_stats
    observation = jnp.array([0.3, -1.0, 2.0], jnp.float32)
    greedy = int(jnp.argmax(networks.q_network.apply(params, observation[None])[0]))
    variables = (params, statistics, jnp.int32(7))
    evaluation = builder.make_policy(networks, SPEC, evaluation=True)
    assert int(evaluation(variables, jax.random.PRNGKey(1), observation, 0)) == greedy
    action, extras = builder.make_policy(networks, SPEC).policy(variables, jax.random.PRNGKey(1), observation, 0)
    assert int(action) == greedy and action.dtype == SPEC.actions.dtype and int(extras["policy_step"]) == 7


def test_networks_of_another_environment_are_refused():
    _, builder, _ = _parts()
    other = registry.get_agent("pqn").make_networks(fakes.discrete_spec(obs_shape=(3,), num_actions=5), PQNConfig())
    with pytest.raises(ValueError, match="5 outputs but the environment has 3 actions"):
        builder.make_policy(other, SPEC)


def test_layer_norm_is_in_the_network_unless_turned_off():
    def norms(networks):
        return [name for name in networks.init(jax.random.PRNGKey(0)) if "layer_norm" in name]

    assert len(norms(_parts(hidden_sizes=(8, 8))[2])) == 2
    assert norms(_parts(layer_norm=False)[2]) == []


@pytest.mark.slow
def test_three_seeds_learn_cartpole_on_the_device():
    """The registered baseline, 3 seeds in one call: every seed reaches 475 within its 100k steps."""
    config = registry.make_experiment_config("pqn", "jax:CartPole-v1", logger_factory=_no_logs)
    result = run(config, RunOptions(launcher="anakin", num_seeds=3), progress=False)
    for seed_run in result.runs:
        curve = [round(e.mean_return) for e in seed_run.evaluations]
        assert max(curve) >= 475.0, (seed_run.seed, curve)
