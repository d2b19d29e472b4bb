"""PPO hyper-parameters; the defaults follow RL Zoo's CartPole-v1 PPO (8 environments per actor, 32-step rollouts)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker, check_learning_rate_decay
from acme.agents.rollout_config import RolloutConfig, check_rollout_config
from acme.jax.torsos import TORSOS


@dataclasses.dataclass(frozen=True)
class PPOConfig(RolloutConfig):
    """Configuration of PPO with a clipped surrogate objective and GAE.

    One learner step takes ``batch_size`` rollouts of ``unroll_length`` steps
    from the queue and runs ``num_epochs`` passes over them in
    ``num_minibatches`` minibatches each: of shuffled steps, or with an LSTM
    (``lstm_size``) of whole rollouts, each unrolled from the state its actor
    stored at its first step. An actor driving K environments
    (``ExperimentConfig.num_envs_per_actor``) fills one batch per
    ``unroll_length`` steps when ``batch_size`` is K.
    """

    # The objective.
    discount: float = 0.98  # per-step discount of future rewards
    gae_lambda: float = 0.8  # GAE's lambda
    clip_epsilon: float = 0.2  # the probability ratio is clipped to [1 - clip_epsilon, 1 + clip_epsilon]
    # As RL Zoo's recurrent PPO (its `lin_0.2` clip range): clip_epsilon falls linearly to 0 over the learner steps
    # that make learning_rate_decay_steps optimiser steps (num_epochs x num_minibatches each), as the step size decays.
    clip_epsilon_decays: bool = False  # decay clip_epsilon to 0 with the step size's decay (needs one)
    value_coef: float = 0.5  # weight of the value loss
    # As pgx's and PureJaxRL's PPO: the value's error counts as the larger of its error and that of the value clipped
    # to within value_clip of the value the update started from.
    value_clip: float = 0.0  # clip the value's change within an update to +- this in its loss; 0: no clipping
    entropy_coef: float = 0.0  # weight of the entropy bonus
    normalize_advantages: bool = True  # normalise advantages by the mean and std of each learner step's batch

    # Optimisation.
    learning_rate: float = 1e-3  # Adam's step size
    adam_eps: float = 1e-5  # Adam's epsilon
    max_gradient_norm: float = 0.5  # gradients are clipped to this global norm
    learning_rate_decay_steps: int = 0  # optimiser steps of a linear decay to final_learning_rate; 0: constant
    final_learning_rate: float = 1e-5  # the step size once the decay is over
    num_epochs: int = 20  # passes over each batch of rollouts
    num_minibatches: int = 1  # minibatches each pass splits the batch into
    # Stable-Baselines3's early stop: an update's passes end at the first minibatch whose approximate KL between the
    # current and the acting policy exceeds 1.5 x target_kl (that minibatch's step is not applied).
    target_kl: float = 0.0  # stop an update's passes past 1.5 x this approximate KL; 0: no early stop
    hidden_sizes: Sequence[int] = (64, 64)  # hidden layer sizes of the MLP
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)
    # False: a convolutional torso each for the policy and the value. True: one convolutional torso under both, each
    # head a tanh MLP of hidden_sizes (pgx's MinAtar PPO network with torso="pooled" and hidden_sizes=(64, 64)).
    shared_torso: bool = False  # one convolutional torso under the policy and value heads
    initial_log_std: float = 0.0  # continuous actions: the Gaussian's state-independent log-std at the start
    # None: separate policy and value MLPs of hidden_sizes. A size: one MLP torso of hidden_sizes, then an LSTM of
    # this many units that the policy and value heads share (recurrent PPO); actors store its state with each step.
    lstm_size: int | None = None  # LSTM units shared by policy and value; None: feed-forward

    # Rollouts and the queue (RolloutConfig's fields, with PPO's defaults).
    unroll_length: int = 32
    batch_size: int = 8  # rollouts per learner step
    replay_table_name: str = "ppo_queue"  # the rollout queue's name

    def __post_init__(self):
        check = ConfigChecker(self)
        check.in_unit_interval(self, "discount", "gae_lambda")
        check.positive(self, "clip_epsilon", "learning_rate", "adam_eps", "max_gradient_norm")
        check_learning_rate_decay(self)
        check(
            not self.clip_epsilon_decays or self.learning_rate_decay_steps > 0,
            "clip_epsilon_decays=True decays the clip range over the step size's decay; set learning_rate_decay_steps "
            "(optimiser steps, > 0) too, or leave clip_epsilon_decays False.",
        )
        check.non_negative(self, "value_coef", "value_clip", "entropy_coef", "target_kl")
        check.positive_int(self, "num_epochs", "num_minibatches")
        check.layer_sizes(self, "hidden_sizes")
        check.one_of(self, "torso", TORSOS)
        check_rollout_config(self)
        if self.lstm_size is not None:
            check.layer_width(self, "lstm_size")
            check(
                not self.shared_torso,
                f"With an LSTM (lstm_size={self.lstm_size}) the policy and value already share the torso and the "
                "LSTM; shared_torso must stay False.",
            )
            check(
                self.batch_size % self.num_minibatches == 0,
                f"With an LSTM (lstm_size={self.lstm_size}) a minibatch holds whole rollouts: num_minibatches "
                f"({self.num_minibatches}) must divide batch_size ({self.batch_size}).",
            )
        rollout_steps = self.batch_size * self.unroll_length
        check(
            rollout_steps % self.num_minibatches == 0,
            f"num_minibatches ({self.num_minibatches}) must divide batch_size * unroll_length ({rollout_steps}).",
        )
