"""TD3+BC hyper-parameters: TD3's, and the weight of the critic's term against the behaviour-cloning one."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from agents.td3.config import TD3Config


@dataclasses.dataclass(frozen=True)
class TD3BCConfig(TD3Config):
    """TD3+BC (Fujimoto & Gu, 2021): TD3 whose policy also regresses on the dataset's actions.

    The policy minimises ``-lambda * mean Q1(s, pi(s)) + mean ||pi(s) - a||^2`` with ``lambda = alpha / mean |Q1|``
    over the batch (held constant in the gradient), so ``alpha`` sets the balance whatever the scale of the
    returns. Observations are normalised (the paper normalises states by the dataset's statistics; here by the
    running statistics of the batches, which converge to them).
    """

    alpha: float = 2.5  # weight of the critic's term against the behaviour-cloning term
    normalize_observations: bool = True  # normalise observations with running statistics the learner keeps

    def __post_init__(self):
        ConfigChecker(self).positive(self, "alpha")
        super().__post_init__()
