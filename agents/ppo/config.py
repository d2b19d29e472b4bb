"""PPO hyper-parameters; the defaults follow RL Zoo's CartPole-v1 PPO (8 environments per actor, 32-step rollouts)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import ConfigChecker


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Configuration of PPO with a clipped surrogate objective and GAE.

    One learner step takes ``batch_size`` rollouts of ``unroll_length`` steps
    from the queue and runs ``num_epochs`` passes over them in
    ``num_minibatches`` minibatches each. An actor driving K environments
    (``ExperimentConfig.num_envs_per_actor``) fills one batch per
    ``unroll_length`` steps when ``batch_size`` is K.
    """

    # The objective.
    discount: float = 0.98
    gae_lambda: float = 0.8
    clip_epsilon: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.0
    normalize_advantages: bool = True
    normalize_observations: bool = False

    # Optimisation.
    learning_rate: float = 1e-3
    adam_eps: float = 1e-5
    max_gradient_norm: float = 0.5
    num_epochs: int = 20
    num_minibatches: int = 1
    hidden_sizes: Sequence[int] = (64, 64)
    initial_log_std: float = 0.0  # continuous actions: the Gaussian's state-independent log-std at the start

    # Rollouts and the queue.
    unroll_length: int = 32  # steps per rollout; a rollout is stored with one more step to bootstrap from
    batch_size: int = 8  # rollouts per learner step
    # Rollouts the queue holds. In a distributed run actors wait while it is full, so it bounds how far acting
    # runs ahead of learning (and the policy lag: about queue_size / batch_size learner steps). In one process
    # the learner empties it as soon as a batch is ready: it must hold batch_size + num_envs_per_actor - 1.
    queue_size: int = 32
    replay_table_name: str = "ppo_queue"
    prefetch_size: int = 1
    variable_update_period: int = 1  # actor steps between parameter fetches (1: the newest every step)
    # Rollouts whose oldest step acted on parameters more than this many learner steps old are dropped
    # (and counted); None keeps every rollout.
    max_policy_lag: int | None = None

    def __post_init__(self):
        check = ConfigChecker(self)
        check.in_unit_interval(self, "discount", "gae_lambda")
        check.positive(self, "clip_epsilon", "learning_rate", "adam_eps", "max_gradient_norm")
        for name in ("value_coef", "entropy_coef"):
            value = getattr(self, name)
            check(value >= 0, f"{name} must be >= 0, got {value}.")
        check.positive_int(
            self,
            "num_epochs",
            "num_minibatches",
            "unroll_length",
            "batch_size",
            "queue_size",
            "prefetch_size",
            "variable_update_period",
        )
        check.layer_sizes(self, "hidden_sizes")
        rollout_steps = self.batch_size * self.unroll_length
        check(
            rollout_steps % self.num_minibatches == 0,
            f"num_minibatches ({self.num_minibatches}) must divide batch_size * unroll_length ({rollout_steps}).",
        )
        check(
            self.queue_size >= self.batch_size,
            f"queue_size ({self.queue_size}) must be >= batch_size ({self.batch_size}): a batch must fit the queue.",
        )
        check(bool(self.replay_table_name), "replay_table_name must be a non-empty string.")
        check(
            self.max_policy_lag is None
            or (isinstance(self.max_policy_lag, int) and not isinstance(self.max_policy_lag, bool))
            and self.max_policy_lag >= 0,
            f"max_policy_lag must be None or an integer >= 0, got {self.max_policy_lag!r}.",
        )

    @property
    def num_sgd_steps_per_step(self) -> int:
        """Batches per learner call: one (its epochs and minibatches run inside the call)."""
        return 1
