"""Assembles DQN's replay, adder, actor, learner and policy (the DQN family's builder, with DQN's learner)."""

from __future__ import annotations

from acme.agents.q_learning import QLearningBuilder
from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQN_LEARNER


class DQNBuilder(QLearningBuilder):
    """Double DQN with n-step returns and optional prioritized replay."""

    config_class = DQNConfig
    learner = DQN_LEARNER
