"""D4PG networks: a deterministic tanh policy and a categorical distributional critic."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from acme import specs
from acme.jax import networks as networks_lib
from acme.jax import utils


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
    action_size = specs.continuous_action_size(environment_spec, "D4PG")
    if num_atoms < 2 or not vmin < vmax:
        raise ValueError(f"D4PG needs num_atoms >= 2 and vmin < vmax, got {num_atoms}, [{vmin}, {vmax}].")

    def policy(observation, return_pre_tanh: bool = False):
        features = networks_lib.mlp_torso(policy_hidden_sizes)(utils.batch_concat(observation).astype(jnp.float32))
        return networks_lib.DeterministicHead(action_size)(features, return_pre_tanh)

    def critic(observation, action):
        logits = networks_lib.Critic(critic_hidden_sizes, num_critics=1, num_outputs=num_atoms, layer_norm=True)(
            observation, action
        )
        return logits[0]

    return D4PGNetworks(
        policy=hk.without_apply_rng(hk.transform(policy)),
        critic=hk.without_apply_rng(hk.transform(critic)),
        environment_spec=environment_spec,
        action_size=action_size,
        num_atoms=num_atoms,
        vmin=float(vmin),
        vmax=float(vmax),
    )
