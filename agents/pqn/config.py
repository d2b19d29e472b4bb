"""PQN hyper-parameters; the defaults learn gymnasium:CartPole-v1 (and jax:CartPole-v1 on the device)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_learning_rate_decay
from acme.agents.exploration import EpsilonGreedyConfig, check_epsilon_greedy
from acme.agents.rollout_config import RolloutConfig, check_rollout_config
from acme.jax.torsos import TORSOS


@dataclasses.dataclass(frozen=True)
class PQNConfig(RolloutConfig, EpsilonGreedyConfig):
    """Configuration of PQN: Q(lambda) on fixed-length rollouts, no replay and no target network.

    One learner step takes ``batch_size`` rollouts of ``unroll_length`` steps
    (one per environment), computes Q(lambda) targets once with the current
    network, and runs ``num_epochs`` shuffled passes over the steps in
    ``num_minibatches`` minibatches. Layer normalisation in the network is what
    keeps these bootstrapped targets stable without a target network. Acting is
    epsilon-greedy (``EpsilonGreedyConfig``; evaluation uses
    ``evaluation_epsilon``).
    """

    # The objective.
    discount: float = 0.99  # per-step discount of future rewards
    q_lambda: float = 0.65  # lambda of the Q(lambda) targets (0: one-step Q-learning, 1: Monte Carlo returns)
    reward_scale: float = 1.0  # the targets learn from rewards times this (0.1 keeps CartPole's Q-values near 10)

    # Optimisation.
    learning_rate: float = 1e-3  # Adam's step size
    adam_eps: float = 1e-5  # Adam's epsilon
    max_gradient_norm: float = 10.0  # gradients are clipped to this global norm
    learning_rate_decay_steps: int = 0  # optimiser steps of a linear decay to final_learning_rate; 0: constant
    final_learning_rate: float = 1e-5  # the step size once the decay is over
    num_epochs: int = 4  # passes over each batch of rollouts
    num_minibatches: int = 8  # minibatches each pass splits the batch into
    hidden_sizes: Sequence[int] = (128, 128)  # hidden layer sizes of the Q-network's MLP
    layer_norm: bool = True  # layer-normalise every hidden layer (PQN's stabiliser)
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)

    # Rollouts (RolloutConfig's fields, with PQN's defaults).
    unroll_length: int = 32
    batch_size: int = 16  # rollouts per learner step
    queue_size: int = 32
    replay_table_name: str = "pqn_queue"

    # Acting (EpsilonGreedyConfig's fields, with PQN's schedule: per-environment steps).
    epsilon_decay_steps: int = 2_000

    def __post_init__(self):
        check = ConfigChecker(self)
        check.in_unit_interval(self, "discount", "q_lambda")
        check.positive(self, "reward_scale", "learning_rate", "adam_eps", "max_gradient_norm")
        check_learning_rate_decay(self)
        check.positive_int(self, "num_epochs", "num_minibatches")
        check.layer_sizes(self, "hidden_sizes")
        check.one_of(self, "torso", TORSOS)
        check_epsilon_greedy(self)
        check_rollout_config(self)
        check(
            self.evaluation_actions == "mode",
            f"PQN's evaluation acts epsilon-greedily with evaluation_epsilon ({self.evaluation_epsilon}); "
            f"evaluation_actions must stay 'mode', got {self.evaluation_actions!r}.",
        )
        rollout_steps = self.batch_size * self.unroll_length
        check(
            rollout_steps % self.num_minibatches == 0,
            f"num_minibatches ({self.num_minibatches}) must divide batch_size * unroll_length ({rollout_steps}).",
        )
