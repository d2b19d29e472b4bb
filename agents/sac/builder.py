"""SAC's policy on the shared actor-critic builder (n-step transition replay)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from acme.agents.transition_builder import ActorCriticBuilder
from acme.jax import networks as networks_lib
from agents.sac.config import SACConfig
from agents.sac.learning import SAC_LEARNER
from agents.sac.networks import SACNetworks


class SACBuilder(ActorCriticBuilder):
    """Soft actor-critic: samples from the tanh-Gaussian policy, acts with tanh(mean) in evaluation."""

    config_class = SACConfig
    learner = SAC_LEARNER

    def select_actions(self, networks: SACNetworks, policy_params, key: jax.Array, observations, evaluation: bool):
        mean, log_std = networks.policy.apply(policy_params, observations)
        return jnp.tanh(mean) if evaluation else networks_lib.sample_tanh_gaussian(key, mean, log_std)[0]
