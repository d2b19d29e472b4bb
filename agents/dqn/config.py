"""DQN hyper-parameters; the defaults solve gymnasium:CartPole-v1."""

from __future__ import annotations

import dataclasses
from typing import Sequence


@dataclasses.dataclass(frozen=True)
class DQNConfig:
    """Configuration of a double DQN with n-step returns and optional prioritized replay."""

    # Learning.
    learning_rate: float = 1e-3
    adam_eps: float = 1e-8
    discount: float = 0.99
    n_step: int = 3
    batch_size: int = 64
    target_update_period: int = 200  # learner steps between target-network copies
    huber_loss_delta: float = 1.0
    max_gradient_norm: float = 10.0
    hidden_sizes: Sequence[int] = (256, 256)

    # Replay.
    min_replay_size: int = 1_000
    max_replay_size: int = 100_000
    samples_per_insert: float = 32.0  # sampled items per inserted item: 0.5 updates per step at batch 64
    samples_per_insert_tolerance: float = 0.1
    prioritized_replay: bool = False
    priority_exponent: float = 0.6
    importance_sampling_exponent: float = 0.4
    replay_table_name: str = "priority_table"
    prefetch_size: int = 2

    # Acting.
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_decay_steps: int = 10_000  # actor steps of linear decay from start to end
    evaluation_epsilon: float = 0.0
    variable_update_period: int = 1  # actor steps between parameter fetches
    # Distributed runs: actor i of N > 1 ends its decay at base ** (1 + spread * i / (N - 1)),
    # a range of exploration rates across actors (as in Ape-X). None: every actor uses epsilon_end.
    actor_epsilon_base: float | None = 0.4
    actor_epsilon_spread: float = 7.0

    def __post_init__(self):
        def check(condition: bool, message: str) -> None:
            if not condition:
                raise ValueError(f"Invalid DQNConfig: {message}")

        check(self.learning_rate > 0, f"learning_rate must be > 0, got {self.learning_rate}.")
        check(self.adam_eps > 0, f"adam_eps must be > 0, got {self.adam_eps}.")
        check(0 <= self.discount <= 1, f"discount must be in [0, 1], got {self.discount}.")
        check(isinstance(self.n_step, int) and self.n_step >= 1, f"n_step must be an integer >= 1, got {self.n_step}.")
        check(
            isinstance(self.batch_size, int) and self.batch_size >= 1,
            f"batch_size must be an integer >= 1, got {self.batch_size}.",
        )
        check(self.target_update_period >= 1, f"target_update_period must be >= 1, got {self.target_update_period}.")
        check(self.huber_loss_delta > 0, f"huber_loss_delta must be > 0, got {self.huber_loss_delta}.")
        check(self.max_gradient_norm > 0, f"max_gradient_norm must be > 0, got {self.max_gradient_norm}.")
        check(
            len(self.hidden_sizes) >= 1 and all(int(h) >= 1 for h in self.hidden_sizes),
            f"hidden_sizes must be a non-empty sequence of positive layer widths, got {self.hidden_sizes}.",
        )
        check(self.min_replay_size >= 1, f"min_replay_size must be >= 1, got {self.min_replay_size}.")
        check(
            self.max_replay_size >= self.min_replay_size,
            f"max_replay_size ({self.max_replay_size}) must be >= min_replay_size ({self.min_replay_size}).",
        )
        check(self.samples_per_insert > 0, f"samples_per_insert must be > 0, got {self.samples_per_insert}.")
        check(
            self.samples_per_insert_tolerance > 0,
            f"samples_per_insert_tolerance must be > 0, got {self.samples_per_insert_tolerance}.",
        )
        check(0 <= self.priority_exponent <= 1, f"priority_exponent must be in [0, 1], got {self.priority_exponent}.")
        check(
            0 <= self.importance_sampling_exponent <= 1,
            f"importance_sampling_exponent must be in [0, 1], got {self.importance_sampling_exponent}.",
        )
        for name in ("epsilon_start", "epsilon_end", "evaluation_epsilon"):
            value = getattr(self, name)
            check(0 <= value <= 1, f"{name} must be a probability in [0, 1], got {value}.")
        check(self.epsilon_decay_steps >= 0, f"epsilon_decay_steps must be >= 0, got {self.epsilon_decay_steps}.")
        check(
            self.actor_epsilon_base is None or 0 < self.actor_epsilon_base < 1,
            f"actor_epsilon_base must be None or in (0, 1), got {self.actor_epsilon_base}.",
        )
        check(self.actor_epsilon_spread >= 0, f"actor_epsilon_spread must be >= 0, got {self.actor_epsilon_spread}.")
        check(self.variable_update_period >= 1, f"variable_update_period must be >= 1, got {self.variable_update_period}.")
        check(self.prefetch_size >= 1, f"prefetch_size must be >= 1, got {self.prefetch_size}.")
        check(bool(self.replay_table_name), "replay_table_name must be a non-empty string.")
