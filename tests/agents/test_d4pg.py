"""D4PG-specific checks: the projected categorical target and the distributional critic's shapes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme.testing import fakes
from agents import d4pg
from agents.d4pg.learning import categorical_target
from agents.d4pg.networks import expected_value

ATOMS = jnp.linspace(-10.0, 10.0, 11)  # spacing 2


def _random_logits(batch: int, seed: int = 0) -> jnp.ndarray:
    return jax.random.normal(jax.random.PRNGKey(seed), (batch, ATOMS.shape[0])) * 3.0


def test_terminal_transition_puts_all_mass_on_the_atoms_around_the_reward():
    rewards = jnp.array([3.0, 4.0, -7.5, 0.0])
    target = np.asarray(categorical_target(ATOMS, rewards, jnp.zeros(4), _random_logits(4)))
    np.testing.assert_allclose(target.sum(axis=-1), 1.0, atol=1e-6)
    expected = np.zeros((4, 11), np.float32)
    expected[0, [6, 7]] = 0.5  # 3 lies halfway between atoms 2 and 4
    expected[1, 7] = 1.0  # 4 is an atom
    expected[2, [1, 2]] = [0.75, 0.25]  # -7.5 is a quarter of the way from -8 to -6
    expected[3, 5] = 1.0
    np.testing.assert_allclose(target, expected, atol=1e-6)


def test_returns_outside_the_support_are_clipped_to_its_ends():
    target = np.asarray(categorical_target(ATOMS, jnp.array([50.0, -50.0]), jnp.zeros(2), _random_logits(2)))
    np.testing.assert_allclose(target[0], np.eye(11)[-1], atol=1e-6)
    np.testing.assert_allclose(target[1], np.eye(11)[0], atol=1e-6)


def test_projection_keeps_the_mean_inside_the_support_and_sums_to_one():
    logits = _random_logits(8, seed=1)
    rewards = jax.random.uniform(jax.random.PRNGKey(2), (8,), minval=-1.0, maxval=1.0)
    discounts = jnp.full(8, 0.5)  # shrinks the support into [-6, 6]: no clipping
    target = categorical_target(ATOMS, rewards, discounts, logits)
    np.testing.assert_allclose(np.asarray(target.sum(-1)), 1.0, atol=1e-5)
    assert np.all(np.asarray(target) >= 0.0)
    wanted = rewards + discounts * expected_value(logits, ATOMS)
    np.testing.assert_allclose(np.asarray(jnp.sum(target * ATOMS, -1)), np.asarray(wanted), atol=1e-4)


def test_identity_backup_returns_the_next_distribution():
    logits = _random_logits(3)
    target = categorical_target(ATOMS, jnp.zeros(3), jnp.ones(3), logits)
    np.testing.assert_allclose(np.asarray(target), np.asarray(jax.nn.softmax(logits)), atol=1e-6)


def test_critic_outputs_one_logit_per_atom():
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    networks = d4pg.make_networks(spec, (8,), (8,), num_atoms=7, vmin=-1.0, vmax=2.0)
    params = networks.init_critic(jax.random.PRNGKey(0))
    logits = networks.critic.apply(params, jnp.ones((5, 3)), jnp.zeros((5, 2)))
    assert logits.shape == (5, 7)
    np.testing.assert_allclose(np.asarray(networks.atoms), np.linspace(-1.0, 2.0, 7), atol=1e-6)
    policy_params = networks.init_policy(jax.random.PRNGKey(1))
    assert networks.policy.apply(policy_params, jnp.ones((5, 3))).shape == (5, 2)


def test_builder_rejects_networks_with_another_support():
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    config = d4pg.D4PGConfig(policy_hidden_sizes=(8,), critic_hidden_sizes=(8,), num_atoms=11)
    networks = d4pg.make_networks(spec, (8,), (8,), num_atoms=21)
    with pytest.raises(ValueError, match="support"):
        d4pg.D4PGBuilder(config).make_learner(
            jax.random.PRNGKey(0), networks, iter(()), lambda label, steps_key=None: None, spec
        )


def _saturated_update(pre_tanh_penalty: float):
    """One D4PG update from a policy whose pre-tanh output is 8 everywhere (action tanh(8) ~ 1 - 2e-7)."""
    from acme import types
    from agents.d4pg.learning import make_initial_state, make_update

    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    config = d4pg.D4PGConfig(
        policy_hidden_sizes=(8,),
        critic_hidden_sizes=(8,),
        num_atoms=11,
        vmin=-10.0,
        vmax=10.0,
        learning_rate=1e-3,
        pre_tanh_penalty=pre_tanh_penalty,
    )
    networks = d4pg.make_networks(spec, (8,), (8,), num_atoms=11, vmin=-10.0, vmax=10.0)
    state = make_initial_state(networks, config, jax.random.PRNGKey(0))
    head = next(name for name in state.policy_params if name.endswith("deterministic_head/linear"))
    policy_params = {
        **state.policy_params,
        head: {
            "w": jnp.zeros_like(state.policy_params[head]["w"]),
            "b": jnp.full_like(state.policy_params[head]["b"], 8.0),
        },
    }
    state = state._replace(policy_params=policy_params, target_policy_params=policy_params)
    rng = np.random.default_rng(0)
    batch = types.Transition(
        observation=rng.normal(size=(16, 3)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(16, 2)).astype(np.float32),
        reward=rng.normal(size=16).astype(np.float32),
        discount=np.full(16, 0.99, np.float32),
        next_observation=rng.normal(size=(16, 3)).astype(np.float32),
    )
    new_state, metrics = jax.jit(make_update(networks, config))(state, batch)
    return np.asarray(new_state.policy_params[head]["b"]), metrics


def test_pre_tanh_penalty_pulls_a_saturated_policy_back_from_the_bound():
    # tanh'(8) ~ 5e-7: the critic's gradient barely reaches the policy. The penalty's gradient (2 * 1e-2 * 8)
    # dominates, so Adam's first step (lr times the gradient's sign) moves every pre-tanh output towards 0.
    bias, metrics = _saturated_update(pre_tanh_penalty=1e-2)
    np.testing.assert_allclose(bias, 8.0 - 1e-3, atol=1e-5)
    assert float(metrics["mean_abs_pre_tanh"]) == pytest.approx(8.0)


def test_without_the_penalty_a_saturated_policy_gets_almost_no_gradient():
    _, metrics = _saturated_update(pre_tanh_penalty=0.0)
    assert float(metrics["policy_grad_norm"]) < 1e-4
    _, penalised = _saturated_update(pre_tanh_penalty=1e-2)
    assert float(penalised["policy_grad_norm"]) > 0.1
