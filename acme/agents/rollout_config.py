"""The rollout and queue fields every on-policy agent's config has (a base for those configs)."""

from __future__ import annotations

import dataclasses

from acme.agents.config_checks import MAX_REPLAY_ITEMS, MAX_STEPS, ConfigChecker, check_max_abs_reward, is_integer
from acme.utils.quoting import quote

EVALUATION_ACTIONS = ("mode", "sample")


@dataclasses.dataclass(frozen=True)
class RolloutConfig:
    """Rollouts, the queue they travel through, parameter fetching and the policy-lag bound.

    An agent's config subclasses it (redeclaring a field changes its default)
    and calls ``check_rollout_config`` in its ``__post_init__``.

    Attributes:
      unroll_length: steps per rollout; a rollout is stored with one more step to bootstrap from.
      batch_size: rollouts per learner step.
      queue_size: rollouts the queue holds. In a distributed run actors wait while it is full, so it bounds
        how far acting runs ahead of learning (the policy lag: about ``queue_size / batch_size`` learner
        steps). In one process the learner empties it as soon as a batch is ready: it must hold
        ``batch_size + num_envs_per_actor - 1``.
      replay_table_name: the queue's name.
      prefetch_size: batches a reverb dataset keeps ready.
      variable_update_period: actor steps between parameter fetches (1: the newest every step).
      max_policy_lag: rollouts whose oldest step acted on parameters more than this many learner steps old
        are dropped (and counted), and distributed actors fetch from the learner itself rather than from a
        copy polled every ``variable_poll_seconds``; None keeps every rollout.
      normalize_observations: normalise observations with running statistics the learner keeps.
      max_abs_reward: rewards are clipped to [-x, x] before they are stored (Atari: 1.0; evaluation keeps the
        game's own); None: as the environment gives them.
      evaluation_actions: how evaluation episodes act: ``mode``, the policy's most likely action, or ``sample``,
        an action drawn from the policy as in training (pgx's and PureJaxRL's evaluations). On MinAtar Freeway
        they differ: a policy whose samples were climbing (1.4 to 13 over 2M steps) acted on its mode at 13-16
        throughout.
    """

    unroll_length: int = 32
    batch_size: int = 8
    queue_size: int = 32
    replay_table_name: str = "rollout_queue"
    prefetch_size: int = 1
    variable_update_period: int = 1
    max_policy_lag: int | None = None
    normalize_observations: bool = False
    max_abs_reward: float | None = None
    evaluation_actions: str = "mode"

    @property
    def num_sgd_steps_per_step(self) -> int:
        """Batches per learner call: one."""
        return 1


def check_rollout_config(config: RolloutConfig) -> None:
    """Checks ``RolloutConfig``'s fields."""
    check = ConfigChecker(config)
    check.positive_int(config, "unroll_length", "batch_size", "prefetch_size")
    check.positive_int(config, "queue_size", maximum=MAX_REPLAY_ITEMS)
    check.positive_int(config, "variable_update_period", maximum=MAX_STEPS)
    check(
        config.queue_size >= config.batch_size,
        f"queue_size ({config.queue_size}) must be >= batch_size ({config.batch_size}): a batch must fit the queue.",
    )
    check(bool(config.replay_table_name), "replay_table_name must be a non-empty string.")
    check_max_abs_reward(config)
    check.one_of(config, "evaluation_actions", EVALUATION_ACTIONS)
    lag = config.max_policy_lag
    if lag is not None and not (is_integer(lag) and 0 <= lag <= MAX_STEPS):
        check.fail(f"max_policy_lag must be None or an integer >= 0 and at most {MAX_STEPS:,}, got {quote(lag)}.")
