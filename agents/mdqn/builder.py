"""Assembles Munchausen DQN: the DQN family's builder (epsilon-greedy over Q-values) with its learner."""

from __future__ import annotations

from acme.agents.q_learning import QLearningBuilder
from agents.mdqn.config import MunchausenDQNConfig
from agents.mdqn.learning import MDQN_LEARNER


class MunchausenDQNBuilder(QLearningBuilder):
    """Munchausen DQN with n-step returns and optional prioritized replay."""

    config_class = MunchausenDQNConfig
    learner = MDQN_LEARNER
