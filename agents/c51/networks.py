"""C51's networks: the DQN family's network with ``num_atoms`` logits per action, and the atoms' values."""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp

from acme import specs
from acme.agents.q_learning import QNetworks, make_q_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (256, 256),
    torso: str = "auto",
    num_atoms: int = 51,
) -> QNetworks:
    """Logits ``[B, A, num_atoms]`` from an MLP of ``hidden_sizes`` (or, for pixels, the torso ``torso`` picks)."""
    return make_q_networks(environment_spec, hidden_sizes, torso, outputs_per_action=num_atoms, agent="C51")


def atoms(config) -> jnp.ndarray:
    """The support's values ``[num_atoms]``, from ``v_min`` to ``v_max``."""
    return jnp.linspace(config.v_min, config.v_max, config.num_atoms)


def q_values(logits: jnp.ndarray, config) -> jnp.ndarray:
    """Each action's expected return ``[..., A]`` under its distribution's ``logits [..., A, num_atoms]``."""
    return jnp.sum(jax.nn.softmax(logits, axis=-1) * atoms(config), axis=-1)
