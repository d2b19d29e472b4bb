"""BC's policy network: logits over discrete actions, or a Gaussian's mean (in the canonical [-1, 1]) and standard
deviation over continuous ones; a convolutional torso for image observations."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from acme import specs, types
from acme.jax import networks as networks_lib
from acme.jax import utils
from acme.jax.torsos import conv_torso, pixel_torso


@dataclasses.dataclass(frozen=True)
class BCNetworks:
    """``policy.apply(params, observations[B, ...])``: logits ``[B, A]`` (``discrete``), else ``(mean, std)``
    ``[B, action_size]`` each."""

    policy: hk.Transformed
    discrete: bool
    action_size: int  # the number of discrete actions, or the continuous action's size
    environment_spec: specs.EnvironmentSpec

    def init(self, key: jax.Array) -> hk.Params:
        observation = utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations))
        return self.policy.init(key, observation)


def make_networks(
    environment_spec: specs.EnvironmentSpec, hidden_sizes: Sequence[int] = (256, 256), torso: str = "auto"
) -> BCNetworks:
    """The policy for ``environment_spec``'s observations and actions."""
    discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
    if discrete:
        action_size = specs.num_discrete_actions(environment_spec)
    else:
        action_size = specs.continuous_action_size(environment_spec, "BC")
    pixels = pixel_torso(torso, environment_spec.observations, "BC")

    def forward(observation: Any):
        if pixels is not None:
            features = conv_torso(pixels)(observation)
        else:
            features = networks_lib.observation_features(hidden_sizes, observation)
        if discrete:
            return hk.Linear(action_size)(features)
        return networks_lib.GaussianHead(action_size)(features)

    return BCNetworks(hk.without_apply_rng(hk.transform(forward)), discrete, action_size, environment_spec)


def greedy_action(networks: BCNetworks, outputs: Any) -> jnp.ndarray:
    """The most likely action: the argmax of the logits, or the Gaussian's mean."""
    return jnp.argmax(outputs, axis=-1) if networks.discrete else outputs[0]
