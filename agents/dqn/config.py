"""DQN hyper-parameters. With them DQN reaches 500 on gymnasium:CartPole-v1 but falls back; the registered CartPole
baseline (baselines/registry.py) adds 20-step returns, which hold the target (its learning test and records)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.exploration import EpsilonGreedyConfig, check_epsilon_greedy
from acme.agents.transition_config import TransitionReplayConfig
from acme.jax.torsos import TORSOS


@dataclasses.dataclass(frozen=True)
class DQNConfig(TransitionReplayConfig, EpsilonGreedyConfig):
    """Configuration of a double DQN with n-step returns and optional prioritized replay; epsilon-greedy
    exploration as ``EpsilonGreedyConfig`` says (its defaults)."""

    # Learning.
    learning_rate: float = 1e-3  # Adam's step size
    adam_eps: float = 1e-8  # Adam's epsilon
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 3  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 64  # transitions per update
    target_update_period: int = 200  # learner steps between target-network copies
    huber_loss_delta: float = 1.0  # the Huber loss is quadratic within this TD error, linear beyond
    max_gradient_norm: float = 10.0  # gradients are clipped to this global norm
    hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the MLP (observations that are not images)
    torso: str = "auto"  # auto (pixels: nature, else the MLP), mlp, nature or resnet (acme.jax.torsos)

    # Replay.
    max_replay_size: int = 100_000  # items replay holds; the oldest go first
    samples_per_insert: float = 32.0  # sampled items per inserted item: 0.5 updates per step at batch 64
    prioritized_replay: bool = False  # sample by priority (|TD error|), else uniformly
    priority_exponent: float = 0.6  # alpha: sampling probability is proportional to priority ** alpha
    importance_sampling_exponent: float = 0.4  # beta: importance weights (1 / (N p)) ** beta correct the sampling
    num_sgd_steps_per_step: int = 64  # U: updates per jitted learner call, on a [U, batch_size] stack (by benchmark)

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "adam_eps", "huber_loss_delta", "max_gradient_norm")
        check(self.target_update_period >= 1, f"target_update_period must be >= 1, got {self.target_update_period}.")
        check.layer_sizes(self, "hidden_sizes")
        check.one_of(self, "torso", TORSOS)
        check.in_unit_interval(self, "priority_exponent", "importance_sampling_exponent")
        check_epsilon_greedy(self)
        check_transition_replay(self)
