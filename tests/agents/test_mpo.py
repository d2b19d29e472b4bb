"""MPO's own pieces: the E-step weights and temperature dual, the decoupled M-step and its KL multipliers."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import types
from acme.testing import fakes
from agents import mpo
from agents.mpo import learning


def _temperature_gradient(q_values: jnp.ndarray, temperature: float, epsilon: float) -> float:
    return float(jax.grad(lambda t: learning.e_step(q_values, t, epsilon)[1])(jnp.float32(temperature)))


def test_e_step_weights_favour_higher_q_and_sum_to_one_per_state():
    q_values = jnp.array([[1.0, -3.0, 0.0], [2.0, 5.0, 0.0], [0.5, 4.0, 0.0]])  # [samples, states]
    weights, _, kl = learning.e_step(q_values, jnp.float32(1.0), 0.1)
    np.testing.assert_allclose(np.sum(weights, axis=0), 1.0, rtol=1e-6)
    order = np.argsort(np.asarray(q_values), axis=0)
    for state in range(2):  # weights are ordered like the values
        assert np.all(np.diff(np.asarray(weights)[order[:, state], state]) > 0)
    np.testing.assert_allclose(weights[:, 2], 1.0 / 3.0, rtol=1e-6)  # equal values, equal weights
    assert kl > 0


def test_temperature_dual_gradient_is_epsilon_minus_kl():
    q_values = jax.random.normal(jax.random.PRNGKey(0), (20, 64)) * 3.0
    temperature, epsilon = 2.0, 0.1
    _, _, kl = learning.e_step(q_values, jnp.float32(temperature), epsilon)
    np.testing.assert_allclose(_temperature_gradient(q_values, temperature, epsilon), epsilon - float(kl), atol=1e-4)


def test_temperature_falls_when_kl_is_under_the_bound_and_rises_when_over():
    q_values = jax.random.normal(jax.random.PRNGKey(1), (20, 64))
    # A hot temperature makes nearly uniform weights: KL ~ 0 < epsilon, so descent lowers the temperature.
    _, _, kl_hot = learning.e_step(q_values, jnp.float32(100.0), 0.1)
    assert kl_hot < 0.1 and _temperature_gradient(q_values, 100.0, 0.1) > 0
    # A cold one makes nearly greedy weights: KL ~ log(20) > epsilon, so descent raises it.
    _, _, kl_cold = learning.e_step(q_values, jnp.float32(0.01), 0.1)
    assert kl_cold > 0.1 and _temperature_gradient(q_values, 0.01, 0.1) < 0


def test_gaussian_kl_matches_closed_form_and_is_zero_for_equal_distributions():
    mean, std = jnp.array([0.3, -0.2]), jnp.array([0.5, 1.5])
    np.testing.assert_allclose(learning.gaussian_kl(mean, std, mean, std), 0.0, atol=1e-7)
    kl = learning.gaussian_kl(jnp.array([0.0]), jnp.array([1.0]), jnp.array([1.0]), jnp.array([2.0]))
    np.testing.assert_allclose(kl, np.log(2.0) + (1.0 + 1.0) / 8.0 - 0.5, rtol=1e-6)


def test_m_step_moves_the_mean_towards_heavily_weighted_actions_only_through_the_mean_loss():
    target = (jnp.zeros((1, 1)), jnp.ones((1, 1)))
    actions = jnp.array([[[-1.0]], [[1.0]]])  # two samples for one state
    weights = jnp.array([[0.1], [0.9]])

    def losses(online_mean, online_std):
        return learning.m_step((online_mean, online_std), target, actions, weights)

    grad_mean = jax.grad(lambda m: losses(m, target[1])[0])(target[0])
    assert grad_mean[0, 0] < 0  # descent raises the mean towards +1
    assert float(jax.grad(lambda m: losses(m, target[1])[1])(target[0])[0, 0]) == 0.0  # std loss ignores the mean
    _, _, kl_mean, kl_std = losses(target[0], target[1])
    np.testing.assert_allclose([kl_mean, kl_std], 0.0, atol=1e-7)


@pytest.mark.parametrize("per_dim", [True, False])
def test_kl_multiplier_grows_when_the_constraint_is_violated(per_dim):
    raw_alpha = jnp.zeros((2,) if per_dim else ())
    kl = jnp.array([1e-2, 1e-5])  # the first dimension is over a bound of 1e-3
    grad = jax.grad(lambda a: learning.kl_constraint(kl, a, 1e-3, per_dim)[1])(raw_alpha)
    if per_dim:
        assert grad[0] < 0 < grad[1]  # descent raises alpha where violated, lowers it elsewhere
    else:
        assert grad < 0  # the summed KL is over the bound


def test_inverse_softplus_round_trips():
    for x in (1e-3, 1.0, 10.0):
        np.testing.assert_allclose(learning.positive(jnp.float32(learning.inverse_softplus(x))), x, rtol=1e-4)


def test_policy_concentrates_on_the_better_action_with_a_fixed_critic():
    """With a critic that prefers action +0.5, repeated updates move the policy mean towards it.

    The mean may lead the target policy by about ``sqrt(2 epsilon_mean) * std``
    and the target follows at rate ``tau``; both are raised to keep this short.
    """
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=1)
    config = mpo.MPOConfig(
        policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_samples=16, epsilon_mean=1e-2, tau=0.05
    )
    networks = mpo.make_networks(spec, (16,), (16,))
    state = learning.make_initial_state(networks, config, jax.random.PRNGKey(0))

    def fixed_critic(params, observation, action):
        return -jnp.square(action[None, :, 0] - 0.5)

    networks = dataclasses.replace(networks, critic=networks.critic._replace(apply=fixed_critic))
    update = jax.jit(learning.make_update(networks, config))
    rng = np.random.default_rng(0)
    batch = types.Transition(
        observation=rng.normal(size=(32, 3)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(32, 1)).astype(np.float32),
        reward=np.zeros(32, np.float32),
        discount=np.full(32, 0.99, np.float32),
        next_observation=rng.normal(size=(32, 3)).astype(np.float32),
    )
    for _ in range(300):
        state, metrics = update(state, batch)
    mean, _ = networks.policy.apply(state.policy_params, batch.next_observation)
    assert float(jnp.mean(mean)) > 0.3, float(jnp.mean(mean))
    assert np.isfinite(float(metrics["policy_loss"]))


def _mean_abs_pre_tanh_after_updates(pre_tanh_penalty: float, num_updates: int = 3_000) -> float:
    """Trains against a critic that prefers ever larger (clipped) actions; returns |pre-tanh mean|."""
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=1)
    config = mpo.MPOConfig(
        policy_hidden_sizes=(16,),
        critic_hidden_sizes=(16,),
        num_samples=16,
        epsilon_mean=1e-2,
        tau=0.05,
        pre_tanh_penalty=pre_tanh_penalty,
    )
    networks = mpo.make_networks(spec, (16,), (16,))
    state = learning.make_initial_state(networks, config, jax.random.PRNGKey(0))

    def monotone_critic(params, observation, action):  # the update clips actions before the critic
        return action[None, :, 0]

    networks = dataclasses.replace(networks, critic=networks.critic._replace(apply=monotone_critic))
    update = jax.jit(learning.make_update(networks, config))
    rng = np.random.default_rng(0)
    batch = types.Transition(
        observation=rng.normal(size=(32, 3)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(32, 1)).astype(np.float32),
        reward=np.zeros(32, np.float32),
        discount=np.full(32, 0.99, np.float32),
        next_observation=rng.normal(size=(32, 3)).astype(np.float32),
    )
    for _ in range(num_updates):
        state, metrics = update(state, batch)
    assert np.isfinite(float(metrics["policy_loss"]))
    return float(metrics["mean_abs_pre_tanh"])


def test_pre_tanh_penalty_keeps_the_mean_out_of_tanh_saturation():
    """Past +1 the clipped critic is flat, so the weighted samples sit beyond the bound and the mean chases them."""
    without = _mean_abs_pre_tanh_after_updates(0.0)
    with_penalty = _mean_abs_pre_tanh_after_updates(1e-2)
    assert without > 3.5, without  # tanh(3.5) = 0.998, and still climbing
    assert with_penalty < 0.7 * without, (with_penalty, without)
    assert np.tanh(with_penalty) > 0.9  # the penalty still lets the mean reach the preferred bound
