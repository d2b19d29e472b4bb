"""IMPALA hyper-parameters; the defaults learn gymnasium:CartPole-v1."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker
from acme.agents.rollout_config import RolloutConfig, check_rollout_config
from acme.jax.torsos import TORSOS


@dataclasses.dataclass(frozen=True)
class IMPALAConfig(RolloutConfig):
    """Configuration of IMPALA: an actor-critic trained with V-trace targets on queued rollouts.

    One learner step is one gradient step on ``batch_size`` rollouts of
    ``unroll_length`` steps. V-trace corrects for rollouts acted on by older
    parameters (in distributed runs actors act on stale parameters).
    """

    # The objective.
    discount: float = 0.99  # per-step discount of future rewards
    vtrace_lambda: float = 1.0  # V-trace's lambda (1: full traces)
    clip_rho_threshold: float = 1.0  # truncation of the importance weights in the value targets
    clip_pg_rho_threshold: float = 1.0  # truncation of the importance weights in the policy gradient
    baseline_coef: float = 0.5  # weight of the value loss
    entropy_coef: float = 0.01  # weight of the entropy bonus
    # Adam moves the value's output by about learning_rate times the last layer's width per step, whatever the
    # loss's scale: on CartPole (targets near 100 at discount 0.99) the value took about 3,000 steps to catch up,
    # and until it had, the advantages were biased and a failed episode's errors of -70 shook the policy (it held
    # 475 in 45% of the evaluations after first reaching it, against 93% at 0.1; 5 seeds on the device).
    reward_scale: float = 1.0  # the loss sees rewards times this, so the value learns targets of that scale

    # Optimisation.
    learning_rate: float = 5e-4  # Adam's step size
    adam_eps: float = 1e-8  # Adam's epsilon
    max_gradient_norm: float = 0.5  # gradients are clipped to this global norm
    hidden_sizes: Sequence[int] = (64, 64)  # hidden layer sizes of the MLP
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)
    # None: separate policy and value MLPs of hidden_sizes. A size: one MLP torso of hidden_sizes, then an LSTM of
    # this many units that the policy and value heads share; actors store its state with every step.
    lstm_size: int | None = None  # LSTM units shared by policy and value; None: feed-forward
    initial_log_std: float = 0.0  # continuous actions: the Gaussian's state-independent log-std at the start

    # Rollouts and the queue (RolloutConfig's fields, with IMPALA's defaults).
    unroll_length: int = 20
    batch_size: int = 8  # rollouts per learner step
    queue_size: int = 64
    replay_table_name: str = "impala_queue"  # the rollout queue's name

    def __post_init__(self):
        check = ConfigChecker(self)
        check.in_unit_interval(self, "discount", "vtrace_lambda")
        check.positive(
            self,
            "clip_rho_threshold",
            "clip_pg_rho_threshold",
            "reward_scale",
            "learning_rate",
            "adam_eps",
            "max_gradient_norm",
        )
        check.non_negative(self, "baseline_coef", "entropy_coef")
        check.layer_sizes(self, "hidden_sizes")
        check.one_of(self, "torso", TORSOS)
        if self.lstm_size is not None:
            check.layer_width(self, "lstm_size")
        check_rollout_config(self)
