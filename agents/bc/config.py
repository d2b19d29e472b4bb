"""BC hyper-parameters: the defaults learn gymnasium:CartPole-v1 and Pendulum-v1 from an expert's episodes."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.agents.transition_config import TransitionReplayConfig
from acme.jax.torsos import TORSOS

CONTINUOUS_LOSSES = ("squared_error", "log_likelihood")


@dataclasses.dataclass(frozen=True)
class BCConfig(TransitionReplayConfig):
    """Behaviour cloning: a policy fitted to the actions of a dataset (Pomerleau, 1991).

    Discrete actions: the log-likelihood of the recorded action under the policy's softmax. Continuous actions:
    ``continuous_loss`` picks the squared error between the policy's action and the recorded one, or the
    recorded action's log-likelihood under a Gaussian policy (mean and standard deviation from the network).
    """

    learning_rate: float = 1e-3  # Adam's step size
    batch_size: int = 256  # transitions per update
    hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the MLP (observations that are not images)
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)
    continuous_loss: str = "squared_error"  # squared_error or log_likelihood
    discount: float = 0.99  # unused by the loss; the transitions' adder reads it
    n_step: int = 1  # one-step transitions: the loss reads (observation, action)

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate")
        check.layer_sizes(self, "hidden_sizes")
        check.one_of(self, "torso", TORSOS)
        check.one_of(self, "continuous_loss", CONTINUOUS_LOSSES)
        check_transition_replay(self)
