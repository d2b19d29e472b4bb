"""DQN networks: the DQN family's Q-network (``acme.agents.q_learning``), one Q-value per action."""

from __future__ import annotations

from typing import Sequence

from acme import specs
from acme.agents.q_learning import QNetworks as DQNNetworks
from acme.agents.q_learning import check_q_networks_match as check_networks_match
from acme.agents.q_learning import make_q_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec, hidden_sizes: Sequence[int] = (256, 256), torso: str = "auto"
) -> DQNNetworks:
    """An MLP Q-network of ``hidden_sizes`` (or, for pixels, the convolutional torso ``torso`` picks and a linear
    head) sized for the environment's observations and actions."""
    return make_q_networks(environment_spec, hidden_sizes, torso, agent="DQN")


__all__ = ["DQNNetworks", "check_networks_match", "make_networks"]
