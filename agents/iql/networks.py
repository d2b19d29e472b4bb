"""IQL networks: a Gaussian policy, twin Q-critics and a state-value network."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import haiku as hk
import jax

from acme import specs
from acme.jax import networks as networks_lib


@dataclasses.dataclass(frozen=True)
class IQLNetworks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> (mean in (-1, 1), std)``; ``critic.apply(c, obs, action) -> q[2, B]``;
    ``value.apply(v, obs) -> v[B]``."""

    value: hk.Transformed = None

    def init_value(self, key: jax.Array) -> hk.Params:
        return self.value.init(key, self.dummy_inputs()[0])


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
) -> IQLNetworks:
    """Networks sized for the environment's observations and (canonical) actions."""
    networks = networks_lib.twin_critic_networks(
        IQLNetworks, environment_spec, "IQL", networks_lib.GaussianHead, policy_hidden_sizes, critic_hidden_sizes
    )

    def value(observation):
        return hk.Linear(1)(networks_lib.observation_features(critic_hidden_sizes, observation))[..., 0]

    return dataclasses.replace(networks, value=hk.without_apply_rng(hk.transform(value)))
