"""SAC hyper-parameters; the defaults solve gymnasium:Pendulum-v1 and dm_control:cartpole/swingup."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig


@dataclasses.dataclass(frozen=True)
class SACConfig(TransitionReplayConfig):
    """Soft actor-critic with twin critics and automatic entropy tuning."""

    # Learning.
    learning_rate: float = 3e-4  # policy, critics and temperature
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 1  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 256  # transitions per update
    tau: float = 0.005  # Polyak step of the target critics
    reward_scale: float = 1.0  # rewards are multiplied by this before learning
    initial_temperature: float = 1.0  # entropy temperature at the start (learned)
    target_entropy: float | None = None  # None: -(action size)
    policy_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the policy's MLP
    critic_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the critic's MLP
    critic_layer_norm: bool = False  # critics on LayerNormMLP (first layer layer-normalised and tanh'd, ELU after)
    normalize_observations: bool = False  # normalise observations with running statistics the learner keeps

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "reward_scale", "initial_temperature")
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
