"""SAC hyper-parameters; the defaults solve gymnasium:Pendulum-v1 and dm_control:cartpole/swingup."""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from acme.config_checks import ConfigChecker, check_transition_replay


@dataclasses.dataclass(frozen=True)
class SACConfig:
    """Soft actor-critic with twin critics and automatic entropy tuning."""

    # Learning.
    learning_rate: float = 3e-4  # policy, critics and temperature
    discount: float = 0.99
    n_step: int = 1
    batch_size: int = 256
    tau: float = 0.005  # Polyak step of the target critics
    reward_scale: float = 1.0
    initial_temperature: float = 1.0
    target_entropy: Optional[float] = None  # None: -(action size)
    policy_hidden_sizes: Sequence[int] = (256, 256)
    critic_hidden_sizes: Sequence[int] = (256, 256)
    normalize_observations: bool = False

    # Replay.
    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0  # one update of batch 256 per environment step
    samples_per_insert_tolerance: float = 0.1
    replay_table_name: str = "priority_table"
    prefetch_size: int = 2
    num_sgd_steps_per_step: int = 1  # U: updates per jitted learner call, on a [U, batch_size] stack

    # Acting.
    variable_update_period: int = 1  # actor steps between parameter fetches

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "reward_scale", "initial_temperature")
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
