"""PQN's network: the DQN family's Q-network (``acme.agents.q_learning``) with layer-normalised hidden layers."""

from __future__ import annotations

from typing import Sequence

from acme import specs
from acme.agents.q_learning import QNetworks as PQNNetworks
from acme.agents.q_learning import make_q_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (128, 128),
    torso: str = "auto",
    layer_norm: bool = True,
) -> PQNNetworks:
    """An MLP Q-network of ``hidden_sizes`` (for pixels, the convolutional torso ``torso`` picks and a linear head),
    every hidden layer layer-normalised unless ``layer_norm`` is False."""
    return make_q_networks(environment_spec, hidden_sizes, torso, agent="PQN", layer_norm=layer_norm)


__all__ = ["PQNNetworks", "make_networks"]
