"""SAC's own pieces: automatic temperature tuning, the twin-critic minimum and the tanh-Gaussian log-probability.

The shared contract (config checks, a learner step, save/restore, end to end)
is in test_continuous_agents.py; these tests check SAC's loss against values
worked out by hand on a fixed batch.
"""

from __future__ import annotations

import distrax
import jax
import numpy as np
import pytest
from scipy import stats

from acme import types
from acme.jax import networks as networks_lib
from acme.testing import fakes
from agents import sac
from agents.sac.learning import SAC_LEARNER

ACTION_DIM = 2
SPEC = fakes.continuous_spec(obs_shape=(3,), action_dim=ACTION_DIM)


def _transitions(batch_size: int = 16) -> types.Transition:
    rng = np.random.default_rng(0)
    return types.Transition(
        observation=rng.normal(size=(batch_size, 3)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(batch_size, ACTION_DIM)).astype(np.float32),
        reward=rng.normal(size=batch_size).astype(np.float32),
        discount=rng.uniform(0.5, 1.0, size=batch_size).astype(np.float32),
        next_observation=rng.normal(size=(batch_size, 3)).astype(np.float32),
    )


def _update_once(state=None, **overrides):
    """SAC's real update on a fixed batch: (config, state before, state after, metrics).

    Run op by op, without jit: the compiled ops are shared by every config here, where one jit per config
    (each target entropy a constant) would cost seconds apiece.
    """
    config = sac.SACConfig(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), **overrides)
    networks = sac.make_networks(SPEC, config.policy_hidden_sizes, config.critic_hidden_sizes)
    if state is None:
        state = SAC_LEARNER.make_initial_state(networks, config, jax.random.PRNGKey(0))
    update = SAC_LEARNER.make_update(networks, config)
    new_state, metrics = update(state, _transitions())
    return config, state, new_state, jax.tree.map(np.asarray, metrics)


# ------------------------------------------------------------------ temperature


def test_temperature_loss_uses_minus_the_action_size_as_the_default_target_entropy():
    config, _, _, metrics = _update_once(initial_temperature=0.5)
    assert config.target_entropy is None
    # temperature_loss = mean(-alpha * (log_prob + target)) = alpha * (entropy - target), target = -|A|.
    assert metrics["temperature_loss"] == pytest.approx(0.5 * (metrics["entropy"] + ACTION_DIM), rel=1e-5)


@pytest.mark.parametrize("side", ["target above the entropy", "target below the entropy"])
def test_temperature_rises_when_entropy_is_below_target_and_falls_when_above(side):
    # The policy's entropy on this batch (the same at any target: the target changes only the temperature step).
    _, _, _, probe = _update_once(initial_temperature=0.5)
    entropy = float(probe["entropy"])
    margin = 0.3 if side == "target above the entropy" else -0.3
    config, before, after, metrics = _update_once(initial_temperature=0.5, target_entropy=entropy + margin)
    assert float(metrics["entropy"]) == pytest.approx(entropy, abs=1e-6)
    change = float(after.log_temperature) - float(before.log_temperature)
    # The gradient of the temperature loss in log(alpha) is alpha * (entropy - target); Adam's first step moves
    # by learning_rate against its sign: up while the entropy is short of its target, down while it exceeds it.
    expected = config.learning_rate * np.sign(margin)
    assert change == pytest.approx(expected, abs=1e-6)
    assert metrics["temperature"] == pytest.approx(float(np.exp(after.log_temperature)), rel=1e-6)
    assert metrics["temperature_loss"] == pytest.approx(-0.5 * margin, rel=1e-4)


def test_temperature_keeps_moving_toward_the_target_over_several_updates():
    temperatures = []
    state = None
    for _ in range(5):
        _, _, state, metrics = _update_once(state, target_entropy=10.0)  # far above any tanh-Gaussian's entropy
        assert metrics["entropy"] < 10.0
        temperatures.append(float(metrics["temperature"]))
    assert np.all(np.diff(temperatures) > 0), temperatures
    assert temperatures[0] > 1.0  # initial_temperature


# ------------------------------------------------------------------ twin critics


def _constant_critics(params, values):
    """Critic parameters whose critic k outputs ``values[k]`` whatever the input (zero output weights)."""
    params = jax.tree.map(np.array, params)
    for k, value in enumerate(values):
        layer = params[f"critic/critic_{k}_output"]
        layer["w"] = np.zeros_like(layer["w"])
        layer["b"] = np.full_like(layer["b"], value)
    return params


@pytest.mark.parametrize("target_values", [(3.0, -2.0), (-2.0, 3.0)])
def test_critic_target_uses_the_smaller_target_critic(target_values):
    online_values = (0.5, 1.5)
    # A negligible temperature takes the entropy bonus out of the target: y = r + d * min_k Q'_k.
    config = sac.SACConfig(
        policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), initial_temperature=1e-9, learning_rate=1e-7
    )
    networks = sac.make_networks(SPEC, config.policy_hidden_sizes, config.critic_hidden_sizes)
    state = SAC_LEARNER.make_initial_state(networks, config, jax.random.PRNGKey(0))
    state = state._replace(
        critic_params=_constant_critics(state.critic_params, online_values),
        target_critic_params=_constant_critics(state.target_critic_params, target_values),
    )
    _, _, _, metrics = _update_once(state, initial_temperature=1e-9, learning_rate=1e-7)
    t = _transitions()
    reward, discount = t.reward.astype(np.float64), t.discount.astype(np.float64)

    def critic_loss(next_q):
        y = reward + discount * next_q
        return 0.5 * np.mean(sum(np.square(q - y) for q in online_values))

    assert metrics["critic_loss"] == pytest.approx(critic_loss(min(target_values)), rel=1e-5)
    assert abs(metrics["critic_loss"] - critic_loss(max(target_values))) > 1.0  # the maximum would be far off
    assert metrics["mean_q"] == pytest.approx(np.mean(online_values), rel=1e-5)
    # The policy climbs the smaller online critic too: loss = mean(alpha * log_prob - min_k Q_k).
    assert metrics["policy_loss"] == pytest.approx(-min(online_values), abs=1e-3)


# ------------------------------------------------------------------ tanh-Gaussian


def _hand_log_prob(pre_tanh, mean, std):
    """log N(u; mean, std) summed over the action dimensions, minus sum log(1 - tanh(u)^2)."""
    return np.sum(stats.norm.logpdf(pre_tanh, mean, std), axis=-1) - np.sum(np.log(1 - np.tanh(pre_tanh) ** 2), -1)


def test_gaussian_log_prob_and_tanh_jacobian_match_closed_forms():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3))
    mean = rng.normal(size=(4, 3))
    log_std = rng.uniform(-2, 1, size=(4, 3))
    got = networks_lib.gaussian_log_prob(x.astype(np.float32), mean.astype(np.float32), log_std.astype(np.float32))
    want = np.sum(-0.5 * ((x - mean) / np.exp(log_std)) ** 2 - log_std - 0.5 * np.log(2 * np.pi), axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got, np.sum(stats.norm.logpdf(x, mean, np.exp(log_std)), -1), rtol=1e-5)
    # log(1 - tanh(u)^2) = -2 log cosh(u), also far in the tails where 1 - tanh(u)^2 underflows in float32.
    u = np.array([-30.0, -8.0, -1.5, 0.0, 0.3, 2.0, 8.0, 30.0])
    got = networks_lib.tanh_log_det_jacobian(u.astype(np.float32))
    np.testing.assert_allclose(got, -2.0 * np.log(np.cosh(u)), rtol=1e-5, atol=1e-5)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("action_dim", [1, 3])
def test_sample_tanh_gaussian_log_prob_matches_the_change_of_variables(action_dim):
    rng = np.random.default_rng(action_dim)
    mean = rng.normal(scale=0.5, size=(64, action_dim)).astype(np.float32)
    log_std = rng.uniform(-1.5, -0.5, size=(64, action_dim)).astype(np.float32)
    action, log_prob = networks_lib.sample_tanh_gaussian(jax.random.PRNGKey(3), mean, log_std)
    action, log_prob = np.asarray(action, np.float64), np.asarray(log_prob, np.float64)
    assert action.shape == (64, action_dim) and log_prob.shape == (64,)
    assert np.all(np.abs(action) < 1)
    pre_tanh = np.arctanh(action)
    std = np.exp(log_std.astype(np.float64))
    np.testing.assert_allclose(log_prob, _hand_log_prob(pre_tanh, mean, std), rtol=1e-4, atol=1e-4)
    # distrax's tanh-transformed Normal, independent over the action dimensions, agrees.
    reference = distrax.Transformed(distrax.Normal(mean, std.astype(np.float32)), distrax.Tanh())
    np.testing.assert_allclose(
        log_prob, np.sum(reference.log_prob(action.astype(np.float32)), axis=-1), rtol=1e-3, atol=1e-3
    )


def test_sample_tanh_gaussian_is_reparameterised():
    """The sample is tanh(mean + std * eps) with the same eps for any mean and std under one key."""
    key = jax.random.PRNGKey(7)
    zeros = np.zeros((5, 2), np.float32)
    base, _ = networks_lib.sample_tanh_gaussian(key, zeros, zeros)  # tanh(eps)
    eps = np.arctanh(np.asarray(base, np.float64))
    mean = np.array([0.1, -0.2], np.float32) * np.ones((5, 1), np.float32)
    log_std = np.log(np.array([0.3, 0.5], np.float32)) * np.ones((5, 1), np.float32)
    action, _ = networks_lib.sample_tanh_gaussian(key, mean, log_std)
    np.testing.assert_allclose(action, np.tanh(mean + np.exp(log_std) * eps), rtol=1e-5, atol=1e-6)


def test_critic_layer_norm_gives_the_critics_a_layer_normalised_torso():
    plain, normalised = (
        sac.AGENT.make_networks(SPEC, sac.SACConfig(critic_hidden_sizes=(16, 16), critic_layer_norm=flag))
        for flag in (False, True)
    )
    key = jax.random.PRNGKey(0)
    assert not any("layer_norm" in name for name in plain.init_critic(key))
    params = normalised.init_critic(key)
    assert [name for name in params if "layer_norm" in name] == [
        f"critic/critic_{i}_torso/layer_norm" for i in range(2)
    ], list(params)
    observation, action = normalised.dummy_inputs()
    assert normalised.critic.apply(params, observation, action).shape == (2, 1)
