"""Assembles C51: the DQN family's builder, epsilon-greedy over each action's expected return."""

from __future__ import annotations

import jax.numpy as jnp

from acme.agents.q_learning import QLearningBuilder
from agents.c51.config import C51Config
from agents.c51.learning import C51_LEARNER
from agents.c51.networks import q_values


class C51Builder(QLearningBuilder):
    """C51 (and, with ``RAINBOW``'s fields, Rainbow's distributional, n-step, prioritized combination)."""

    config_class = C51Config
    learner = C51_LEARNER

    def q_values(self, outputs: jnp.ndarray) -> jnp.ndarray:
        return q_values(outputs, self.config)
