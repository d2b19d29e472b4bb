"""MPO hyper-parameters; the defaults are tuned for gymnasium:Pendulum-v1."""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig


@dataclasses.dataclass(frozen=True)
class MPOConfig(TransitionReplayConfig):
    """Maximum a posteriori policy optimisation with a Gaussian policy and an expected-value critic."""

    # Learning.
    learning_rate: float = 3e-4  # policy and critic
    dual_learning_rate: float = 1e-2  # temperature and the two KL multipliers
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 5  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 256  # transitions per update
    tau: float = 0.005  # Polyak step of the target policy and target critic
    reward_scale: float = 1.0  # rewards are multiplied by this before learning
    grad_norm_clip: float = 40.0  # gradients are clipped to this global norm
    policy_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the policy's MLP
    critic_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the critic's MLP
    num_critics: int = 1  # 2: twin critics, the minimum is used
    init_std: float = 0.5  # policy standard deviation at initialisation (actions in [-1, 1])
    min_std: float = 1e-4  # floor of the policy's standard deviation
    normalize_observations: bool = False  # normalise observations with running statistics the learner keeps
    # Weight of an L2 penalty on the policy mean before tanh. The critic sees clipped actions, so
    # where the best action is at a bound the weighted samples lie past it and the M-step drives the
    # tanh mean into saturation, where its gradient vanishes and it can stay pinned (a bang-bang
    # greedy policy). A small penalty keeps it where the critic can still move it. 0 disables it.
    pre_tanh_penalty: float = 0.0  # weight of a penalty on the policy's pre-tanh activations (against saturation)

    # Policy improvement.
    num_samples: int = 10  # actions sampled per state from the target policy (cost grows linearly)
    epsilon: float = 0.1  # KL bound of the E-step (non-parametric) policy
    epsilon_mean: float = 2.5e-3  # KL bound on the change of the mean (per action dimension if per_dim)
    epsilon_stddev: float = 1e-6  # KL bound on the change of the standard deviation
    per_dim_constraining: bool = True  # one multiplier and bound per action dimension
    initial_temperature: float = 1.0  # the E-step temperature at the start (learned)
    initial_alpha_mean: float = 1.0  # the mean's KL multiplier at the start (learned)
    initial_alpha_stddev: float = 10.0  # the standard deviation's KL multiplier at the start (learned)

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(
            self,
            "learning_rate",
            "dual_learning_rate",
            "reward_scale",
            "grad_norm_clip",
            "epsilon",
            "epsilon_mean",
            "epsilon_stddev",
            "initial_temperature",
            "initial_alpha_mean",
            "initial_alpha_stddev",
        )
        check(
            math.isfinite(self.pre_tanh_penalty) and self.pre_tanh_penalty >= 0,
            f"pre_tanh_penalty must be a finite number >= 0, got {self.pre_tanh_penalty}.",
        )
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check.positive_int(self, "num_samples", "num_critics")
        check(
            self.init_std > self.min_std >= 0,
            f"init_std ({self.init_std}) must be > min_std ({self.min_std}) >= 0.",
        )
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
