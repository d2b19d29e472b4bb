"""D4PG hyper-parameters; the defaults suit dm_control tasks (per-step rewards in [0, 1])."""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from acme.agents.config_checks import MAX_BATCH_DIMENSION, ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig


@dataclasses.dataclass(frozen=True)
class D4PGConfig(TransitionReplayConfig):
    """Distributed distributional deterministic policy gradients (one-process or distributed).

    The critic is a categorical distribution over ``num_atoms`` values evenly
    spaced on ``[vmin, vmax]``; returns outside the support are clipped onto its
    ends, so the support must cover the discounted returns of the task. The
    default ``[0, 100]`` covers rewards in ``[0, 1]`` at discount 0.99
    (``1 / (1 - 0.99) = 100``); tasks with other reward ranges (Pendulum's are in
    ``[-16.3, 0]``) need their own support.
    """

    # Learning.
    learning_rate: float = 1e-4  # policy and critic (Adam)
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 5  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 256  # transitions per update
    tau: float = 0.005  # Polyak step of the target policy and critic
    num_atoms: int = 51  # atoms of the categorical value distribution
    vmin: float = 0.0  # lowest value the distribution's support holds
    vmax: float = 100.0  # highest value the distribution's support holds
    policy_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the policy's MLP
    critic_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the critic's MLP
    normalize_observations: bool = False  # normalise observations with running statistics the learner keeps
    # Weight of an L2 penalty on the policy's pre-tanh output. A deterministic tanh policy pushed into
    # saturation (|pre_tanh| of 7 or more) gets almost no policy gradient and can stay pinned at an
    # action bound for good; a small penalty keeps it where the critic can still move it. 0 disables it.
    pre_tanh_penalty: float = 0.0  # weight of a penalty on the policy's pre-tanh activations (against saturation)

    # Acting.
    sigma: float = 0.3  # std of the Gaussian exploration noise added to the [-1, 1] action

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate")
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check.integer(self, "num_atoms", minimum=2, maximum=MAX_BATCH_DIMENSION)
        check(
            math.isfinite(self.vmin) and math.isfinite(self.vmax) and self.vmin < self.vmax,
            f"vmin ({self.vmin}) must be < vmax ({self.vmax}), both finite.",
        )
        check(math.isfinite(self.sigma) and self.sigma >= 0, f"sigma must be >= 0, got {self.sigma}.")
        check(
            math.isfinite(self.pre_tanh_penalty) and self.pre_tanh_penalty >= 0,
            f"pre_tanh_penalty must be a finite number >= 0, got {self.pre_tanh_penalty}.",
        )
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
