"""TD3-only checks: delayed policy and target updates, target-policy smoothing, exploration noise.

The contract shared with the other continuous agents (config checks, learner
sanity, builder end to end) lives in test_continuous_agents.py.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from acme import types
from acme.testing import fakes
from agents import td3
from agents.td3 import learning

SPEC = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
TINY = dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16))


def _batch(batch_size: int = 32) -> types.Transition:
    rng = np.random.default_rng(0)
    return types.Transition(
        observation=rng.normal(size=(batch_size, 3)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(batch_size, 2)).astype(np.float32),
        reward=rng.normal(size=batch_size).astype(np.float32),
        discount=np.full(batch_size, 0.99, np.float32),
        next_observation=rng.normal(size=(batch_size, 3)).astype(np.float32),
    )


def _setup(**overrides):
    config = td3.TD3Config(**{**TINY, **overrides})
    networks = td3.make_networks(SPEC, config.policy_hidden_sizes, config.critic_hidden_sizes)
    state = learning.make_initial_state(networks, config, jax.random.PRNGKey(0))
    return config, networks, state, jax.jit(learning.make_update(networks, config))


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


@pytest.mark.parametrize("policy_delay", [1, 2, 3])
def test_policy_and_targets_update_only_every_policy_delay_steps(policy_delay):
    _, _, state, update = _setup(policy_delay=policy_delay)
    batch = _batch()
    for step in range(2 * policy_delay + 1):
        new_state, metrics = update(state, batch)
        expected = step % policy_delay == 0  # the 1st, (policy_delay + 1)-th, ... learner steps
        assert not _same(state.critic_params, new_state.critic_params), "the critics learn every step"
        for name in ("policy_params", "policy_opt_state", "target_policy_params", "target_critic_params"):
            changed = not _same(getattr(state, name), getattr(new_state, name))
            assert changed == expected, f"{name} changed={changed} at learner step {step + 1}"
        assert float(metrics["policy_updated"]) == float(expected)
        assert np.isfinite(metrics["policy_loss"]) and np.isfinite(metrics["critic_loss"])
        assert int(new_state.steps) == step + 1
        state = new_state


def test_targets_move_by_a_polyak_step_towards_the_new_parameters():
    config, _, state, update = _setup(tau=0.25)
    new_state, _ = update(state, _batch())
    for online, old_target, target in (
        (new_state.policy_params, state.target_policy_params, new_state.target_policy_params),
        (new_state.critic_params, state.target_critic_params, new_state.target_critic_params),
    ):
        expected = jax.tree.map(lambda o, t: config.tau * o + (1 - config.tau) * t, online, old_target)
        for a, b in zip(jax.tree.leaves(expected), jax.tree.leaves(target)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_smoothing_noise_is_clipped_by_noise_clip():
    # With noise_clip 0, however large policy_noise is, the target action is the plain target action.
    _, _, state, noiseless = _setup(policy_noise=0.0)
    _, _, _, clipped = _setup(policy_noise=10.0, noise_clip=0.0)
    _, _, _, noisy = _setup(policy_noise=10.0, noise_clip=1.0)
    batch = _batch()
    a, _ = noiseless(state, batch)
    b, _ = clipped(state, batch)
    c, _ = noisy(state, batch)
    assert _same(a.critic_params, b.critic_params)
    assert not _same(a.critic_params, c.critic_params)


def _policy_params(config):
    networks = td3.make_networks(SPEC, config.policy_hidden_sizes, config.critic_hidden_sizes)
    state = learning.make_initial_state(networks, config, jax.random.PRNGKey(0))
    return networks, (state.policy_params, state.observation_stats)


def test_exploration_adds_clipped_gaussian_noise_and_evaluation_is_deterministic():
    config = td3.TD3Config(**TINY, exploration_sigma=0.1)
    networks, params = _policy_params(config)
    builder = td3.TD3Builder(config)
    explore = jax.jit(builder.make_policy(networks, SPEC, evaluation=False))
    greedy = jax.jit(builder.make_policy(networks, SPEC, evaluation=True))
    observation = np.ones(3, np.float32)
    mean = np.asarray(greedy(params, jax.random.PRNGKey(0), observation, 0))
    samples = np.stack([np.asarray(explore(params, jax.random.PRNGKey(i), observation, i)) for i in range(500)])
    assert np.all(np.abs(samples) <= 1.0)
    np.testing.assert_allclose(samples.std(axis=0), 0.1, rtol=0.15)
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.02)
    # Large noise is clipped to the canonical box.
    wide = jax.jit(td3.TD3Builder(td3.TD3Config(**TINY, exploration_sigma=5.0)).make_policy(networks, SPEC))
    actions = np.stack([np.asarray(wide(params, jax.random.PRNGKey(i), observation, i)) for i in range(50)])
    assert np.all(np.abs(actions) <= 1.0) and np.any(np.abs(actions) == 1.0)


def test_learner_serves_policy_with_observation_statistics():
    config = td3.TD3Config(**TINY)
    networks = td3.make_networks(SPEC, config.policy_hidden_sizes, config.critic_hidden_sizes)
    learner = td3.TD3_LEARNER.make_learner(networks, config, jax.random.PRNGKey(0), iter([]))
    policy_params, stats = learner.get_variables(["policy"])[0]
    assert _same(policy_params, learner.state.policy_params)
    assert _same(stats, learner.state.observation_stats)
    with pytest.raises(KeyError, match="available"):
        learner.get_variables(["temperature"])
