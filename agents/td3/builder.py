"""TD3's policy on the shared actor-critic builder (n-step transition replay)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from acme.agents.transition_builder import ActorCriticBuilder
from agents.td3.config import TD3Config
from agents.td3.learning import TD3_LEARNER
from agents.td3.networks import TD3Networks


class TD3Builder(ActorCriticBuilder):
    """TD3: explores with clipped Gaussian noise on the deterministic action, acts without noise in evaluation."""

    config_class = TD3Config
    learner = TD3_LEARNER

    def select_actions(self, networks: TD3Networks, policy_params, key: jax.Array, observations, evaluation: bool):
        actions = networks.policy.apply(policy_params, observations)
        if evaluation:
            return actions
        noise = self.config.exploration_sigma * jax.random.normal(key, actions.shape, actions.dtype)
        return jnp.clip(actions + noise, -1.0, 1.0)
