"""PPO's own pieces: its config and the clipped surrogate objective (the rest: test_rollout_agents.py)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from agents.ppo import PPOConfig
from agents.ppo.learning import clipped_surrogate_loss


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("clip_epsilon", 0.0, "clip_epsilon must be > 0"),
        ("gae_lambda", 1.5, r"gae_lambda must be in \[0, 1\]"),
        ("num_epochs", 0, "num_epochs must be an integer >= 1"),
        ("num_minibatches", 3, r"num_minibatches \(3\) must divide batch_size \* unroll_length \(256\)"),
        ("value_coef", -1.0, "value_coef must be >= 0"),
        ("target_kl", -0.01, "target_kl must be >= 0"),
    ],
)
def test_invalid_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        PPOConfig(**{field: value})


def test_replace_keeps_validation():
    with pytest.raises(ValueError, match="clip_epsilon"):
        dataclasses.replace(PPOConfig(), clip_epsilon=-1.0)


def test_clipped_surrogate_matches_a_hand_computed_value():
    log_prob = jnp.log(jnp.array([1.5, 0.5, 1.1, 0.7]))  # ratios 1.5, 0.5, 1.1, 0.7 against log mu = 0
    advantage = jnp.array([2.0, 2.0, -1.0, -1.0])
    loss = clipped_surrogate_loss(log_prob, jnp.zeros(4), advantage, 0.2)
    # A > 0: -min(rho, clip(rho)) A = -(1.2 * 2, 0.5 * 2); A < 0: -min(rho A, clip(rho) A) = -(-1.1, -0.8).
    np.testing.assert_allclose(loss, [-2.4, -1.0, 1.1, 0.8], rtol=1e-6)
