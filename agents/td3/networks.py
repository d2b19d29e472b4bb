"""TD3 networks: a deterministic tanh policy and twin Q-critics."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import haiku as hk
import jax.numpy as jnp

from acme import specs
from acme.jax import networks as networks_lib
from acme.jax import utils


@dataclasses.dataclass(frozen=True)
class TD3Networks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> action in (-1, 1)``; ``critic.apply(c, obs, action) -> q[2, B]``."""


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
) -> TD3Networks:
    """Networks sized for the environment's observations and (canonical) actions."""
    action_size = specs.continuous_action_size(environment_spec, "TD3")

    def policy(observation):
        features = networks_lib.mlp_torso(policy_hidden_sizes)(utils.batch_concat(observation).astype(jnp.float32))
        return networks_lib.DeterministicHead(action_size)(features)

    def critic(observation, action):
        return networks_lib.Critic(critic_hidden_sizes, num_critics=2)(observation, action)

    return TD3Networks(
        policy=hk.without_apply_rng(hk.transform(policy)),
        critic=hk.without_apply_rng(hk.transform(critic)),
        environment_spec=environment_spec,
        action_size=action_size,
    )
