"""GAE over joined-episode streams, against values worked out by hand."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from acme.jax import sequences

REWARDS = jnp.array([1.0, 2.0, 3.0])
DISCOUNTS = jnp.array([0.5, 0.5, 0.5])
VALUES = jnp.array([10.0, 20.0, 30.0, 40.0])


def test_gae_without_episode_ends_matches_the_recursion():
    # delta = (1 + 0.5*20 - 10, 2 + 0.5*30 - 20, 3 + 0.5*40 - 30) = (1, -3, -7); A_t = delta_t + 0.25 A_{t+1}.
    advantages = sequences.generalized_advantages(REWARDS, DISCOUNTS, VALUES, jnp.zeros(3, bool), 0.5)
    np.testing.assert_allclose(advantages, [-0.1875, -4.75, -7.0])


def test_a_final_step_gets_no_advantage_and_blocks_the_next_episode():
    # Step 1 is the final observation of a time-limited episode: step 0 bootstraps from its value (20) alone.
    advantages = sequences.generalized_advantages(REWARDS, DISCOUNTS, VALUES, jnp.array([False, True, False]), 0.5)
    np.testing.assert_allclose(advantages, [1.0, 0.0, -7.0])


def test_a_termination_bootstraps_from_nothing():
    discounts = jnp.array([0.0, 0.5, 0.5])  # the environment's discount 0 after step 0's action
    advantages = sequences.generalized_advantages(REWARDS, discounts, VALUES, jnp.array([False, True, False]), 0.5)
    np.testing.assert_allclose(advantages, [1.0 - 10.0, 0.0, -7.0])


def test_lambda_one_gives_discounted_returns_minus_values():
    advantages = sequences.generalized_advantages(REWARDS, DISCOUNTS, VALUES, jnp.zeros(3, bool), 1.0)
    returns = [1 + 0.5 * (2 + 0.5 * (3 + 0.5 * 40)), 2 + 0.5 * (3 + 0.5 * 40), 3 + 0.5 * 40]
    np.testing.assert_allclose(advantages, np.array(returns) - VALUES[:3])


def test_batched_gae_is_gae_per_row():
    is_final = jnp.array([[False, False, False], [False, True, False]])
    batched = sequences.batched_generalized_advantages(
        jnp.stack([REWARDS, REWARDS]), jnp.stack([DISCOUNTS, DISCOUNTS]), jnp.stack([VALUES, VALUES]), is_final, 0.5
    )
    np.testing.assert_allclose(batched, [[-0.1875, -4.75, -7.0], [1.0, 0.0, -7.0]])


def test_final_steps_are_those_followed_by_an_episode_start():
    start = jnp.array([[True, False, False, True, False]])
    np.testing.assert_array_equal(sequences.final_steps(start), [[False, False, True, False]])


@pytest.mark.parametrize(
    "mask, expected", [([True, False, True], 2.0), ([False, False, False], 0.0), ([True, True, True], 2.0)]
)
def test_masked_mean(mask, expected):
    assert float(sequences.masked_mean(jnp.array([1.0, 2.0, 3.0]), jnp.array(mask))) == pytest.approx(expected)


V_VALUES = jnp.array([1.0, 2.0, 3.0])
V_REWARDS = jnp.array([1.0, 1.0])
V_DISCOUNTS = jnp.array([0.9, 0.9])


def test_vtrace_on_policy_is_the_n_step_return():
    # vs_1 = 1 + 0.9 * 3 = 3.7; vs_0 = 1 + 0.9 * 3.7 = 4.33.
    out = sequences.vtrace(V_VALUES, V_REWARDS, V_DISCOUNTS, jnp.ones(2), jnp.zeros(2, bool))
    np.testing.assert_allclose(out.errors, [4.33 - 1.0, 3.7 - 2.0], rtol=1e-6)
    np.testing.assert_allclose(out.pg_advantage, [1 + 0.9 * 3.7 - 1.0, 1 + 0.9 * 3.0 - 2.0], rtol=1e-6)


def test_vtrace_truncates_the_importance_weights():
    # rho = (2, 0.5), thresholds 1: delta_1 = 0.5 (1 + 2.7 - 2) = 0.85; delta_0 = 1 (1 + 1.8 - 1) = 1.8;
    # vs_0 - V_0 = 1.8 + 0.9 * min(1, 2) * 0.85 = 2.565. pg: q_0 = 1 + 0.9 * (2 + 0.85) = 3.565 -> 2.565;
    # q_1 = 1 + 0.9 * 3 = 3.7 -> 0.5 * (3.7 - 2) = 0.85.
    out = sequences.vtrace(V_VALUES, V_REWARDS, V_DISCOUNTS, jnp.array([2.0, 0.5]), jnp.zeros(2, bool))
    np.testing.assert_allclose(out.errors, [2.565, 0.85], rtol=1e-6)
    np.testing.assert_allclose(out.pg_advantage, [2.565, 0.85], rtol=1e-6)


def test_vtrace_stops_at_a_final_step():
    # Step 1 is a final step: its error and advantage are 0 and step 0 bootstraps from V_1 = 2 alone.
    out = sequences.vtrace(V_VALUES, V_REWARDS, V_DISCOUNTS, jnp.array([1.0, 7.0]), jnp.array([False, True]))
    np.testing.assert_allclose(out.errors, [1 + 0.9 * 2 - 1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(out.pg_advantage, [1 + 0.9 * 2 - 1.0, 0.0], atol=1e-6)


def test_batched_vtrace_is_vtrace_per_row():
    rhos = jnp.array([[1.0, 1.0], [2.0, 0.5]])
    out = sequences.batched_vtrace(
        jnp.stack([V_VALUES, V_VALUES]),
        jnp.stack([V_REWARDS, V_REWARDS]),
        jnp.stack([V_DISCOUNTS, V_DISCOUNTS]),
        rhos,
        jnp.zeros((2, 2), bool),
    )
    np.testing.assert_allclose(out.errors, [[3.33, 1.7], [2.565, 0.85]], rtol=1e-6)


def test_lambda_returns_match_the_recursion():
    # G_2 = 3 + 0.5 * 40 = 23; G_1 = 2 + 0.5 (0.5 * 30 + 0.5 * 23) = 15.25; G_0 = 1 + 0.5 (0.5 * 20 + 0.5 * 15.25).
    returns = sequences.lambda_returns(REWARDS, DISCOUNTS, VALUES, jnp.zeros(3, bool), 0.5)
    np.testing.assert_allclose(returns, [9.8125, 15.25, 23.0])


def test_lambda_zero_gives_one_step_targets():
    returns = sequences.lambda_returns(REWARDS, DISCOUNTS, VALUES, jnp.zeros(3, bool), 0.0)
    np.testing.assert_allclose(returns, [1 + 0.5 * 20, 2 + 0.5 * 30, 3 + 0.5 * 40])


def test_a_final_steps_return_is_its_value_and_blocks_the_next_episode():
    # Step 1 is the final observation of a time-limited episode: step 0 bootstraps from its value (20) alone.
    is_final = jnp.array([False, True, False])
    np.testing.assert_allclose(sequences.lambda_returns(REWARDS, DISCOUNTS, VALUES, is_final, 0.5), [11.0, 20.0, 23.0])
    terminated = jnp.array([0.0, 0.5, 0.5])  # the environment's discount 0 after step 0's action
    np.testing.assert_allclose(sequences.lambda_returns(REWARDS, terminated, VALUES, is_final, 0.5), [1.0, 20.0, 23.0])


def test_batched_lambda_returns_are_lambda_returns_per_row():
    is_final = jnp.array([[False, False, False], [False, True, False]])
    batched = sequences.batched_lambda_returns(
        jnp.stack([REWARDS, REWARDS]), jnp.stack([DISCOUNTS, DISCOUNTS]), jnp.stack([VALUES, VALUES]), is_final, 0.5
    )
    np.testing.assert_allclose(batched, [[9.8125, 15.25, 23.0], [11.0, 20.0, 23.0]])
