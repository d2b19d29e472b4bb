"""MPO networks: a diagonal Gaussian policy and one (or twin) expected-value Q-critics."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import haiku as hk
import jax.numpy as jnp

from acme import specs
from acme.jax import networks as networks_lib
from acme.jax import utils


@dataclasses.dataclass(frozen=True)
class MPONetworks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> (mean, std)``; ``critic.apply(c, obs, action) -> q[num_critics, B]``.

    ``policy.apply(p, obs, True)`` returns ``(mean, std, pre_tanh)``.

    The policy mean is tanh-bounded to (-1, 1); the standard deviation is
    ``softplus + min_std``. Actions are sampled from the unbounded Gaussian and
    clipped to ``[-1, 1]`` when acting and before the critic sees them.
    """

    num_critics: int = 1


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
    num_critics: int = 1,
    init_std: float = 0.5,
    min_std: float = 1e-4,
) -> MPONetworks:
    """Networks sized for the environment's observations and (canonical) actions.

    Both torsos are layer-normalised MLPs (``LayerNormMLP``), which keeps the
    first layer well scaled whatever the observation magnitudes.
    """
    action_size = specs.continuous_action_size(environment_spec, "MPO")

    def policy(observation, return_pre_tanh: bool = False):
        inputs = utils.batch_concat(observation).astype(jnp.float32)
        features = networks_lib.mlp_torso(policy_hidden_sizes, layer_norm=True)(inputs)
        head = networks_lib.GaussianHead(action_size, init_std=init_std, min_std=min_std)
        return head(features, return_pre_tanh)

    def critic(observation, action):
        return networks_lib.Critic(critic_hidden_sizes, num_critics=num_critics, layer_norm=True)(observation, action)

    return MPONetworks(
        policy=hk.without_apply_rng(hk.transform(policy)),
        critic=hk.without_apply_rng(hk.transform(critic)),
        environment_spec=environment_spec,
        action_size=action_size,
        num_critics=num_critics,
    )
