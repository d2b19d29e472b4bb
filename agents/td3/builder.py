"""TD3's policy on the shared actor-critic builder (n-step transition replay)."""

from __future__ import annotations

import jax

from acme.agents.transition_builder import ActorCriticBuilder
from acme.jax import networks as networks_lib
from agents.td3.config import TD3Config
from agents.td3.learning import TD3_LEARNER
from agents.td3.networks import TD3Networks


class TD3Builder(ActorCriticBuilder):
    """TD3: explores with clipped Gaussian noise on the deterministic action, acts without noise in evaluation."""

    config_class = TD3Config
    learner = TD3_LEARNER

    def select_actions(self, networks: TD3Networks, policy_params, key: jax.Array, observations, evaluation: bool):
        actions = networks.policy.apply(policy_params, observations)
        sigma = self.config.exploration_sigma
        return actions if evaluation else networks_lib.sample_clipped_gaussian(key, actions, sigma)
