"""IQL's policy on the shared actor-critic builder: the Gaussian's mean when evaluating, a clipped sample else."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from acme.agents.transition_builder import ActorCriticBuilder
from agents.iql.config import IQLConfig
from agents.iql.learning import IQL_LEARNER
from agents.iql.networks import IQLNetworks


class IQLBuilder(ActorCriticBuilder):
    config_class = IQLConfig
    learner = IQL_LEARNER

    def select_actions(self, networks: IQLNetworks, policy_params, key: jax.Array, observations, evaluation: bool):
        mean, std = networks.policy.apply(policy_params, observations)
        return mean if evaluation else jnp.clip(mean + std * jax.random.normal(key, mean.shape), -1.0, 1.0)
