"""C51 hyper-parameters: the DQN family's fields and the categorical distribution's support (Bellemare, Dabney and
Munos, 2017). Rainbow's combination is this agent with ``prioritized_replay=True`` and n-step returns (the
``rainbow`` preset, ``RAINBOW``)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from acme.agents.q_learning import QLearningConfig, check_q_learning


@dataclasses.dataclass(frozen=True)
class C51Config(QLearningConfig):
    """Configuration of C51: each action's return as a categorical distribution over ``num_atoms`` evenly spaced
    values in ``[v_min, v_max]``, learned by categorical double Q-learning (the projected target's cross-entropy)."""

    num_atoms: int = 51  # atoms of each action's return distribution
    v_min: float = -10.0  # the smallest return the support holds
    v_max: float = 10.0  # the largest return the support holds

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive_int(self, "num_atoms")
        check(self.num_atoms >= 2, f"num_atoms must be >= 2, got {self.num_atoms}.")
        check(self.v_min < self.v_max, f"v_min ({self.v_min}) must be < v_max ({self.v_max}).")
        check_q_learning(self)


# Rainbow's distributional, n-step, prioritized combination (Hessel et al., 2018), without noisy networks or the
# dueling head: C51's overrides.
RAINBOW = dict(prioritized_replay=True, n_step=3, priority_exponent=0.5, importance_sampling_exponent=0.4)
