"""The replay and acting fields every n-step-transition agent's config has (a base for those configs)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TransitionReplayConfig:
    """Replay, fused updates and parameter fetching, with defaults for one batch-256 update per environment step.

    An agent's config subclasses it, adds its own fields (``discount``,
    ``n_step`` and ``batch_size`` among them) and calls
    ``acme.agents.config_checks.check_transition_replay`` in its
    ``__post_init__``, which checks these fields too.
    """

    min_replay_size: int = 1_000  # items in replay before learning starts
    max_replay_size: int = 1_000_000  # items replay holds; the oldest go first
    samples_per_insert: float = 256.0  # sampled items per inserted item: at batch 256, one update per step
    samples_per_insert_tolerance: float = 0.1  # limiter slack: min_replay_size * samples_per_insert * this samples
    replay_table_name: str = "priority_table"  # the replay table's name
    prefetch_size: int = 2  # batches a reverb dataset keeps ready
    num_sgd_steps_per_step: int = 1  # U: updates per jitted learner call, on a [U, batch_size] stack
    variable_update_period: int = 1  # actor steps between parameter fetches
    max_abs_reward: float | None = None  # rewards are clipped to [-x, x] before they are stored (Atari: 1.0)
