"""QR-DQN hyper-parameters: the DQN family's fields and the quantile regression's (Dabney et al., 2018)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from acme.agents.q_learning import QLearningConfig, check_q_learning


@dataclasses.dataclass(frozen=True)
class QRDQNConfig(QLearningConfig):
    """Configuration of QR-DQN: each action's return as ``num_quantiles`` quantiles at the midpoints of equal
    probability bins, learned by quantile regression with a Huber loss of width ``huber_param``."""

    num_quantiles: int = 51  # quantiles of each action's return distribution
    huber_param: float = 1.0  # kappa: the quantile Huber loss is quadratic within it (0: the plain quantile loss)

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive_int(self, "num_quantiles")
        check.non_negative(self, "huber_param")
        check_q_learning(self)
