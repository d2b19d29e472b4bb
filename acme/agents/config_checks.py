"""Validation shared by agent configs: one clear message per bad value."""

from __future__ import annotations

from typing import Any


class ConfigChecker:
    """Raises ``ValueError("Invalid <Config>: ...")`` for the first failed check.

    Example::

        check = ConfigChecker(self)
        check(self.learning_rate > 0, f"learning_rate must be > 0, got {self.learning_rate}.")
    """

    def __init__(self, config: Any):
        self._name = type(config).__name__

    def __call__(self, condition: bool, message: str) -> None:
        if not condition:
            raise ValueError(f"Invalid {self._name}: {message}")

    def positive(self, config: Any, *names: str) -> None:
        for name in names:
            value = getattr(config, name)
            self(value > 0, f"{name} must be > 0, got {value}.")

    def non_negative(self, config: Any, *names: str) -> None:
        for name in names:
            value = getattr(config, name)
            self(value >= 0, f"{name} must be >= 0, got {value}.")

    def positive_int(self, config: Any, *names: str) -> None:
        for name in names:
            value = getattr(config, name)
            self(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                f"{name} must be an integer >= 1, got {value!r}.",
            )

    def in_unit_interval(self, config: Any, *names: str) -> None:
        for name in names:
            value = getattr(config, name)
            self(0 <= value <= 1, f"{name} must be in [0, 1], got {value}.")

    def one_of(self, config: Any, name: str, choices: tuple) -> None:
        value = getattr(config, name)
        self(value in choices, f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}.")

    def layer_sizes(self, config: Any, *names: str) -> None:
        for name in names:
            sizes = getattr(config, name)
            self(
                len(sizes) >= 1 and all(isinstance(h, int) and h >= 1 for h in sizes),
                f"{name} must be a non-empty sequence of positive integer layer widths, got {sizes!r}.",
            )


def check_max_abs_reward(config: Any) -> None:
    """``max_abs_reward``: None, or a number > 0."""
    bound = config.max_abs_reward
    ConfigChecker(config)(
        bound is None or (isinstance(bound, (int, float)) and not isinstance(bound, bool) and bound > 0),
        f"max_abs_reward must be None (rewards as given) or a number > 0, got {bound!r}.",
    )


def check_transition_replay(config: Any) -> None:
    """Checks the fields every n-step-transition agent shares.

    Those fields are: discount, n_step, batch_size, min_replay_size,
    max_replay_size, samples_per_insert, samples_per_insert_tolerance,
    replay_table_name, prefetch_size, variable_update_period,
    num_sgd_steps_per_step and max_abs_reward.
    """
    check = ConfigChecker(config)
    check.in_unit_interval(config, "discount")
    check.positive_int(
        config,
        "n_step",
        "batch_size",
        "min_replay_size",
        "prefetch_size",
        "variable_update_period",
        "num_sgd_steps_per_step",
    )
    check(
        config.max_replay_size >= config.min_replay_size,
        f"max_replay_size ({config.max_replay_size}) must be >= min_replay_size ({config.min_replay_size}).",
    )
    check.positive(config, "samples_per_insert", "samples_per_insert_tolerance")
    check(bool(config.replay_table_name), "replay_table_name must be a non-empty string.")
    check_max_abs_reward(config)
