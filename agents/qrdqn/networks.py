"""QR-DQN's networks: the DQN family's network with ``num_quantiles`` outputs per action, and the quantiles'
probability levels."""

from __future__ import annotations

from typing import Sequence

import jax.numpy as jnp

from acme import specs
from acme.agents.q_learning import QNetworks, make_q_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (256, 256),
    torso: str = "auto",
    num_quantiles: int = 51,
) -> QNetworks:
    """Quantiles ``[B, A, num_quantiles]`` from an MLP of ``hidden_sizes`` (or, for pixels, the torso ``torso``
    picks)."""
    return make_q_networks(environment_spec, hidden_sizes, torso, outputs_per_action=num_quantiles, agent="QR-DQN")


def quantile_levels(num_quantiles: int) -> jnp.ndarray:
    """The midpoints ``(2i + 1) / (2N)`` of ``N`` equal probability bins: the levels the outputs estimate."""
    return (jnp.arange(num_quantiles, dtype=jnp.float32) + 0.5) / num_quantiles


def q_values(quantiles: jnp.ndarray) -> jnp.ndarray:
    """Each action's expected return ``[..., A]``: the mean of its quantiles ``[..., A, N]``."""
    return jnp.mean(quantiles, axis=-1)
