"""D4PG networks: a deterministic tanh policy and a categorical distributional critic."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import jax
import jax.numpy as jnp

from acme import specs
from acme.jax import networks as networks_lib


@dataclasses.dataclass(frozen=True)
class D4PGNetworks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> action[B, A]``; ``critic.apply(c, obs, action) -> logits[B, num_atoms]``.

    ``policy.apply(p, obs, True)`` returns ``(action, pre_tanh)``.

    The critic's logits give a categorical distribution of the return over the
    fixed support ``atoms`` (``num_atoms`` values evenly spaced on ``[vmin, vmax]``).
    """

    num_atoms: int
    vmin: float
    vmax: float

    @property
    def atoms(self) -> jnp.ndarray:
        """The critic's support, ``linspace(vmin, vmax, num_atoms)`` (float32)."""
        return jnp.linspace(self.vmin, self.vmax, self.num_atoms, dtype=jnp.float32)


def expected_value(logits: jnp.ndarray, atoms: jnp.ndarray) -> jnp.ndarray:
    """The mean of the categorical distribution ``softmax(logits)`` over ``atoms`` (last axis)."""
    return jnp.sum(jax.nn.softmax(logits, axis=-1) * atoms, axis=-1)


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
    num_atoms: int = 51,
    vmin: float = 0.0,
    vmax: float = 100.0,
) -> D4PGNetworks:
    """Networks sized for the environment's observations and (canonical) actions."""
    if num_atoms < 2 or not vmin < vmax:
        raise ValueError(f"D4PG needs num_atoms >= 2 and vmin < vmax, got {num_atoms}, [{vmin}, {vmax}].")

    def make_policy(action_size: int):
        def policy(observation, return_pre_tanh: bool = False):
            features = networks_lib.observation_features(policy_hidden_sizes, observation)
            return networks_lib.DeterministicHead(action_size)(features, return_pre_tanh)

        return policy

    def critic(observation, action):
        critics = networks_lib.Critic(critic_hidden_sizes, num_critics=1, num_outputs=num_atoms, layer_norm=True)
        return critics(observation, action)[0]

    return D4PGNetworks.transform(
        environment_spec, "D4PG", make_policy, critic, num_atoms=num_atoms, vmin=float(vmin), vmax=float(vmax)
    )
