"""Assembles QR-DQN: the DQN family's builder, epsilon-greedy over each action's mean quantile."""

from __future__ import annotations

import jax.numpy as jnp

from acme.agents.q_learning import QLearningBuilder
from agents.qrdqn.config import QRDQNConfig
from agents.qrdqn.learning import QRDQN_LEARNER
from agents.qrdqn.networks import q_values


class QRDQNBuilder(QLearningBuilder):
    """QR-DQN with n-step returns and optional prioritized replay."""

    config_class = QRDQNConfig
    learner = QRDQN_LEARNER

    def q_values(self, outputs: jnp.ndarray) -> jnp.ndarray:
        return q_values(outputs)
