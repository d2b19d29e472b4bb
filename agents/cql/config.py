"""CQL hyper-parameters: SAC's, and the conservative penalty's (tuned automatically towards a target gap)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import ConfigChecker
from agents.sac.config import SACConfig


@dataclasses.dataclass(frozen=True)
class CQLConfig(SACConfig):
    """Conservative Q-learning (Kumar et al., 2020), CQL(H) on SAC with the automatic conservative weight.

    Each critic's loss adds ``weight * (logsumexp_a Q(s, a) - Q(s, a_dataset) - target_action_gap)``: the
    log-sum-exp over actions, estimated by importance sampling from ``num_action_samples`` uniform actions and
    as many of the policy's at ``s`` and at ``s'``, pushes down the values of actions the dataset does not take.
    The weight (``exp`` of a learned log-weight, clipped to ``max_cql_weight``) rises while the gap exceeds
    ``target_action_gap`` and falls while it is below (a Lagrange multiplier's dual step).

    The gap is measured on this estimate's scale (the log-sum-exp includes the samples' log-densities and
    ``-log(3N)``), on which the Q-values of a critic that is flat over actions differ by under one. On a mixed
    Pendulum dataset a larger target let the weight fall towards zero and the policy did not learn; the default
    target and initial weight are the ones the recorded results (baselines/results/offline.json) used.
    """

    num_action_samples: int = 10  # actions sampled per source (uniform, policy at s, policy at s') per state
    target_action_gap: float = 1.0  # the gap between sampled and dataset actions' values the weight aims for
    initial_cql_weight: float = 5.0  # the conservative weight at the start (learned)
    max_cql_weight: float = 1e6  # the weight is clipped here

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive_int(self, "num_action_samples")
        check.positive(self, "initial_cql_weight", "max_cql_weight")
        check(self.target_action_gap >= 0, f"target_action_gap must be >= 0, got {self.target_action_gap}.")
        super().__post_init__()
