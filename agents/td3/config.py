"""TD3 hyper-parameters; the defaults solve gymnasium:Pendulum-v1."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig


@dataclasses.dataclass(frozen=True)
class TD3Config(TransitionReplayConfig):
    """Twin delayed deep deterministic policy gradient (Fujimoto et al., 2018)."""

    # Learning.
    learning_rate: float = 3e-4  # policy and critics
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 1  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 256  # transitions per update
    tau: float = 0.005  # Polyak step of the target policy and critics
    policy_delay: int = 2  # learner steps per policy and target update
    policy_noise: float = 0.2  # std of the target-policy smoothing noise, in [-1, 1] action units
    noise_clip: float = 0.5  # the smoothing noise is clipped to [-noise_clip, noise_clip]
    reward_scale: float = 1.0  # rewards are multiplied by this before learning
    policy_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the policy's MLP
    critic_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the critic's MLP
    normalize_observations: bool = False  # normalise observations with running statistics the learner keeps

    # Acting.
    exploration_sigma: float = 0.1  # std of the Gaussian exploration noise, in [-1, 1] action units

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "reward_scale")
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check.positive_int(self, "policy_delay")
        check(self.policy_noise >= 0, f"policy_noise must be >= 0, got {self.policy_noise}.")
        check(self.noise_clip >= 0, f"noise_clip must be >= 0, got {self.noise_clip}.")
        check(self.exploration_sigma >= 0, f"exploration_sigma must be >= 0, got {self.exploration_sigma}.")
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
