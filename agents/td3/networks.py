"""TD3 networks: a deterministic tanh policy and twin Q-critics."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme import specs
from acme.jax import networks as networks_lib


@dataclasses.dataclass(frozen=True)
class TD3Networks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> action in (-1, 1)``; ``critic.apply(c, obs, action) -> q[2, B]``."""


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
) -> TD3Networks:
    """Networks sized for the environment's observations and (canonical) actions."""
    return networks_lib.twin_critic_networks(
        TD3Networks, environment_spec, "TD3", networks_lib.DeterministicHead, policy_hidden_sizes, critic_hidden_sizes
    )
