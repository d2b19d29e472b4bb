"""Munchausen DQN hyper-parameters: the DQN family's fields and the Munchausen term's (Vieillard et al., 2020)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from acme.agents.q_learning import QLearningConfig, check_q_learning


@dataclasses.dataclass(frozen=True)
class MunchausenDQNConfig(QLearningConfig):
    """Configuration of Munchausen DQN: soft (entropy-regularised) targets plus the scaled, clipped log-policy of
    the action taken, added to the reward."""

    entropy_temperature: float = 0.03  # tau: the softmax policy is softmax(q / tau), its entropy weighted by tau
    munchausen_coefficient: float = 0.9  # alpha: the weight of tau * log pi(a|s) added to the reward
    clip_value_min: float = -1.0  # l0: tau * log pi(a|s) is clipped to [l0, 0] before it is added
    huber_loss_delta: float = 1.0  # the Huber loss is quadratic within this TD error, linear beyond

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "entropy_temperature", "huber_loss_delta")
        check.in_unit_interval(self, "munchausen_coefficient")
        check(self.clip_value_min < 0, f"clip_value_min must be < 0, got {self.clip_value_min}.")
        check_q_learning(self)
