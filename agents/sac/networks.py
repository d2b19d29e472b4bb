"""SAC networks: a tanh-Gaussian policy and twin Q-critics."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme import specs
from acme.jax import networks as networks_lib


@dataclasses.dataclass(frozen=True)
class SACNetworks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> (mean, log_std)``; ``critic.apply(c, obs, action) -> q[2, B]``."""


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
    critic_layer_norm: bool = False,
) -> SACNetworks:
    """Networks sized for the environment's observations and (canonical) actions."""
    return networks_lib.twin_critic_networks(
        SACNetworks,
        environment_spec,
        "SAC",
        networks_lib.TanhGaussianHead,
        policy_hidden_sizes,
        critic_hidden_sizes,
        critic_layer_norm,
    )
