"""DQN networks: an MLP (or, for pixels, a convolutional torso) from observations to one Q-value per action."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from acme import specs, types
from acme.jax import utils
from acme.jax.torsos import conv_torso, pixel_torso


@dataclasses.dataclass(frozen=True)
class DQNNetworks:
    """``q_network.apply(params, observations[B, ...]) -> q_values[B, num_actions]``."""

    q_network: hk.Transformed
    num_actions: int
    observation_spec: object

    def init(self, key: jax.Array):
        dummy = utils.add_batch_dim(types.zeros_like_spec(self.observation_spec))
        return self.q_network.init(key, dummy)


def make_networks(
    environment_spec: specs.EnvironmentSpec, hidden_sizes: Sequence[int] = (256, 256), torso: str = "auto"
) -> DQNNetworks:
    """A Q-network sized for the environment's observations and actions: an MLP of ``hidden_sizes``, or the
    convolutional torso ``torso`` picks (``acme.jax.torsos``; pixels by default) and a linear head."""
    num_actions = specs.num_discrete_actions(environment_spec)
    pixels = pixel_torso(torso, environment_spec.observations, "DQN")

    def forward(observation):
        if pixels is not None:
            return hk.Linear(num_actions)(conv_torso(pixels)(observation))
        flat = utils.batch_concat(observation).astype(jnp.float32)
        return hk.nets.MLP([*hidden_sizes, num_actions])(flat)

    return DQNNetworks(
        q_network=hk.without_apply_rng(hk.transform(forward)),
        num_actions=num_actions,
        observation_spec=environment_spec.observations,
    )


def check_networks_match(networks: DQNNetworks, environment_spec: specs.EnvironmentSpec) -> None:
    """Raises a clear error if the networks were built for another environment."""
    num_actions = specs.num_discrete_actions(environment_spec)
    if networks.num_actions != num_actions:
        raise ValueError(
            f"The Q-network has {networks.num_actions} outputs but the environment has {num_actions} actions; "
            "build the networks from this environment's spec (make_networks(environment_spec))."
        )
    got = [tuple(s.shape) for s in jax.tree.leaves(networks.observation_spec)]
    want = [tuple(s.shape) for s in jax.tree.leaves(environment_spec.observations)]
    if got != want:
        raise ValueError(
            f"The Q-network expects observations of shape {got} but the environment gives {want}; "
            "build the networks from this environment's spec."
        )
