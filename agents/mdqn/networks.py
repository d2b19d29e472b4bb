"""Munchausen DQN's networks: the DQN family's Q-network (``acme.agents.q_learning``), one Q-value per action."""

from __future__ import annotations

from typing import Sequence

from acme import specs
from acme.agents.q_learning import QNetworks, make_q_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec, hidden_sizes: Sequence[int] = (256, 256), torso: str = "auto"
) -> QNetworks:
    """A Q-network of ``hidden_sizes`` (or, for pixels, the convolutional torso ``torso`` picks)."""
    return make_q_networks(environment_spec, hidden_sizes, torso, agent="Munchausen DQN")
