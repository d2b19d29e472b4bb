"""DQN hyper-parameters. With them DQN reaches 500 on gymnasium:CartPole-v1 but falls back; the registered CartPole
baseline (baselines/registry.py) adds 20-step returns, which hold the target (its learning test and records)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from acme.agents.q_learning import QLearningConfig, check_q_learning


@dataclasses.dataclass(frozen=True)
class DQNConfig(QLearningConfig):
    """Configuration of a double DQN with n-step returns and optional prioritized replay: the DQN family's fields
    (``QLearningConfig``) and the Huber loss's."""

    huber_loss_delta: float = 1.0  # the Huber loss is quadratic within this TD error, linear beyond

    def __post_init__(self):
        ConfigChecker(self).positive(self, "huber_loss_delta")
        check_q_learning(self)
