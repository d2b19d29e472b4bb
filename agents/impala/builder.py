"""IMPALA on the shared rollout builder (fixed-length rollouts through a queue, a policy that stores its
log-probabilities)."""

from __future__ import annotations

from acme.agents.rollout_builder import RolloutBuilder
from agents.impala.config import IMPALAConfig
from agents.impala.learning import IMPALA_LEARNER


class IMPALABuilder(RolloutBuilder):
    """IMPALA: one V-trace gradient step per batch of rollouts, each consumed once."""

    config_class = IMPALAConfig
    learner = IMPALA_LEARNER

    def lstm_size(self) -> int | None:
        return self.config.lstm_size
