"""MPO's policy on the shared actor-critic builder (n-step transition replay)."""

from __future__ import annotations

import jax

from acme.agents.transition_builder import ActorCriticBuilder
from acme.jax import networks as networks_lib
from agents.mpo.config import MPOConfig
from agents.mpo.learning import MPO_LEARNER
from agents.mpo.networks import MPONetworks


class MPOBuilder(ActorCriticBuilder):
    """MPO: samples from the Gaussian policy (clipped to [-1, 1]), acts with its mean in evaluation."""

    config_class = MPOConfig
    learner = MPO_LEARNER

    def select_actions(self, networks: MPONetworks, policy_params, key: jax.Array, observations, evaluation: bool):
        mean, std = networks.policy.apply(policy_params, observations)
        return mean if evaluation else networks_lib.sample_clipped_gaussian(key, mean, std)  # the mean is in (-1, 1)
