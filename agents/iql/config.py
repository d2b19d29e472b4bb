"""IQL hyper-parameters; the defaults are the paper's for locomotion (expectile 0.7, temperature 3)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig


@dataclasses.dataclass(frozen=True)
class IQLConfig(TransitionReplayConfig):
    """Implicit Q-learning (Kostrikov, Nair & Levine, 2022): Q-learning that never queries actions outside the
    dataset. A value network fits an upper expectile of the target critics' Q over the dataset's actions, the
    critics regress on ``r + discount * V(s')``, and the policy is extracted by advantage-weighted regression
    (the log-likelihood of the dataset's actions, weighted by ``exp(temperature * (Q - V))``, capped)."""

    learning_rate: float = 3e-4  # Adam's step size, for every network
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 1  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 256  # transitions per update
    tau: float = 0.005  # Polyak step of the target critics
    expectile: float = 0.7  # the value's expectile of Q: 0.5 is the mean, towards 1 the maximum
    temperature: float = 3.0  # inverse temperature of the advantage weights
    max_weight: float = 100.0  # the advantage weights are capped here
    policy_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the policy's MLP
    critic_hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the critics' and the value's MLPs
    normalize_observations: bool = False  # normalise observations with running statistics the learner keeps

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "temperature", "max_weight")
        check(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}.")
        check(0 < self.expectile < 1, f"expectile must be in (0, 1), got {self.expectile}.")
        check.layer_sizes(self, "policy_hidden_sizes", "critic_hidden_sizes")
        check_transition_replay(self)
