"""Validation shared by agent configs: one clear message per bad value.

Every number a config holds is finite (NaN and infinities are refused), and every size and count has an upper
bound that no real run reaches but that stops nonsense (a typo, a hostile file) before it reaches an allocation:

- step counts and periods (decays, update periods, the policy lag): ``MAX_STEPS`` = 2**31 - 1, as steps are
  counted in int32 on the device;
- items a replay table or queue holds: ``MAX_REPLAY_ITEMS`` = 2**30, about 20 GiB of the local replay's
  bookkeeping (20 bytes an item) before any observation, where the largest published replays hold 10**7 items;
- one dimension of a batch (batch sizes, sequence and unroll lengths, n-step horizons, updates per call, epochs,
  minibatches, samples, atoms, quantiles, critics, prefetched batches): ``MAX_BATCH_DIMENSION`` = 2**20, a
  thousand times what runs use (a batch of 2**20 observations of 1 KiB is already 1 GiB);
- layer widths and LSTM units: ``MAX_LAYER_WIDTH`` = 2**16 (a square float32 weight matrix of that width is
  16 GiB, a whole accelerator's memory), and at most ``MAX_LAYERS`` = 1,024 layers.

A message never formats a value before its check has failed, and shows at most
``acme.utils.quoting.ECHO_LIMIT`` characters of it.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import math
import numbers
import types
import typing
from typing import Any

from acme.utils.quoting import quote

MAX_STEPS = 2**31 - 1
MAX_REPLAY_ITEMS = 2**30
MAX_BATCH_DIMENSION = 2**20
MAX_LAYER_WIDTH = 2**16
MAX_LAYERS = 1024

_POWERS = {MAX_STEPS: "2**31 - 1", MAX_REPLAY_ITEMS: "2**30", MAX_BATCH_DIMENSION: "2**20", MAX_LAYER_WIDTH: "2**16"}


def _bound(maximum: int) -> str:
    """``1,048,576 (2**20)``."""
    power = _POWERS.get(maximum)
    return f"{maximum:,}" + (f" ({power})" if power else "")


def is_number(value: Any) -> bool:
    """A real number that is not a bool (``True`` is an int to Python, not a learning rate)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """A real number, not a bool, neither NaN nor infinite (nor an integer past a float's range)."""
    if not is_number(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int of over 308 digits
        return False


def is_integer(value: Any) -> bool:
    """An integer (Python's or numpy's) that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class ConfigChecker:
    """Raises ``ValueError("Invalid <Config>: ...")`` for the first failed check.

    Made for a dataclass config, it first checks that every field holds a value of its declared type
    (``check_field_types``), so the checks after it compare numbers. Example::

        check = ConfigChecker(self)
        check.positive(self, "learning_rate")
        check(self.v_min < self.v_max, f"v_min ({self.v_min}) must be < v_max ({self.v_max}).")

    A message given to ``check(condition, message)`` is formatted before the condition is known: keep it to
    numbers (the type check has run, so they are short); the methods format a value only once it failed.
    """

    def __init__(self, config: Any):
        self._name = type(config).__name__
        check_field_types(config)

    def __call__(self, condition: bool, message: str) -> None:
        if not condition:
            self.fail(message)

    def fail(self, message: str) -> typing.NoReturn:
        raise ValueError(f"Invalid {self._name}: {message}")

    def finite(self, config: Any, *names: str) -> None:
        """Each field is a finite number."""
        for name in names:
            value = getattr(config, name)
            if not is_finite_number(value):
                self.fail(f"{name} must be a finite number, got {quote(value)}.")

    def positive(self, config: Any, *names: str) -> None:
        """Each field is a finite number > 0."""
        for name in names:
            value = getattr(config, name)
            if not (is_finite_number(value) and value > 0):
                self.fail(f"{name} must be > 0 and finite, got {quote(value)}.")

    def non_negative(self, config: Any, *names: str) -> None:
        """Each field is a finite number >= 0."""
        for name in names:
            value = getattr(config, name)
            if not (is_finite_number(value) and value >= 0):
                self.fail(f"{name} must be >= 0 and finite, got {quote(value)}.")

    def in_range(
        self, config: Any, name: str, low: float, high: float, low_open: bool = False, high_open: bool = False
    ) -> None:
        """The field is a finite number in ``[low, high]``; ``low_open``/``high_open`` leave an end out."""
        value = getattr(config, name)
        inside = is_finite_number(value) and (low < value if low_open else low <= value)
        inside = inside and (value < high if high_open else value <= high)
        if not inside:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            self.fail(f"{name} must be in {interval}, got {quote(value)}.")

    def in_unit_interval(self, config: Any, *names: str) -> None:
        """Each field is a finite number in [0, 1] (a probability, a discount, an exponent)."""
        for name in names:
            self.in_range(config, name, 0, 1)

    def probability(self, config: Any, *names: str) -> None:
        """Each field is a probability: a finite number in [0, 1]."""
        for name in names:
            value = getattr(config, name)
            if not (is_finite_number(value) and 0 <= value <= 1):
                self.fail(f"{name} must be a probability in [0, 1], got {quote(value)}.")

    def positive_int(self, config: Any, *names: str, maximum: int = MAX_BATCH_DIMENSION) -> None:
        """Each field is an integer in ``1..maximum`` (by default ``MAX_BATCH_DIMENSION``)."""
        self.integer(config, *names, minimum=1, maximum=maximum)

    def integer(self, config: Any, *names: str, minimum: int, maximum: int) -> None:
        """Each field is an integer in ``minimum..maximum``."""
        for name in names:
            value = getattr(config, name)
            if not (is_integer(value) and minimum <= value <= maximum):
                self.fail(f"{name} must be an integer >= {minimum} and at most {_bound(maximum)}, got {quote(value)}.")

    def layer_width(self, config: Any, *names: str) -> None:
        """Each field is a layer's width (or an LSTM's units): an integer in ``1..MAX_LAYER_WIDTH``."""
        self.positive_int(config, *names, maximum=MAX_LAYER_WIDTH)

    def one_of(self, config: Any, name: str, choices: tuple) -> None:
        value = getattr(config, name)
        if value not in choices:
            self.fail(f"{name} must be one of {', '.join(map(str, choices))}, got {quote(value)}.")

    def layer_sizes(self, config: Any, *names: str) -> None:
        """Each field is 1 to ``MAX_LAYERS`` layer widths, each an integer in ``1..MAX_LAYER_WIDTH``."""
        for name in names:
            sizes = getattr(config, name)
            accepted = (
                f"{name} must be a non-empty sequence of positive integer layer widths (at most {MAX_LAYERS:,} layers "
                f"of at most {_bound(MAX_LAYER_WIDTH)} units)"
            )
            if not isinstance(sizes, (tuple, list)) or not 1 <= len(sizes) <= MAX_LAYERS:
                self.fail(f"{accepted}, got {quote(sizes)}.")
            for index, width in enumerate(sizes):
                if not (is_integer(width) and 1 <= width <= MAX_LAYER_WIDTH):
                    self.fail(f"{accepted}; layer {index} of {quote(sizes)} is {quote(width)}.")


@functools.lru_cache(maxsize=None)
def _field_types(config_class: type) -> tuple[tuple[str, Any], ...]:
    """The dataclass's init fields and their resolved types (``Any`` where a type cannot be resolved)."""
    try:
        hints = typing.get_type_hints(config_class)
    except (NameError, TypeError, AttributeError):  # a local class's annotations may name what its module cannot see
        hints = {}
    return tuple((f.name, hints.get(f.name, Any)) for f in dataclasses.fields(config_class) if f.init)


def _item_type(origin: Any, arguments: tuple) -> Any:
    """The item type of ``Sequence[X]``, ``list[X]`` or ``tuple[X, ...]``; None for any other type."""
    if origin in (list, collections.abc.Sequence) and len(arguments) == 1:
        return arguments[0]
    if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
        return arguments[0]
    return None


def _type_error(kind: Any, value: Any) -> str | None:
    """What ``value`` must be as a value of ``kind`` if it is not one (None if it is, or ``kind`` is not checked)."""
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in arguments:
            return None
        others = [a for a in arguments if a is not type(None)]
        if len(others) != 1:
            return None
        problem = _type_error(others[0], value)
        return f"None or {problem}" if problem and type(None) in arguments else problem
    if kind is float:
        return None if is_finite_number(value) else "a finite number"
    if kind is int:  # 2.5 or True is left to the field's own check, which says the range it takes
        return None if isinstance(value, numbers.Integral) or is_finite_number(value) else "an integer"
    if kind is bool:
        return None if isinstance(value, bool) else "true or false"
    if kind is str:
        return None if isinstance(value, str) else "a string"
    item = _item_type(origin, arguments)
    if item is not None:
        wanted = f"a sequence of at most {MAX_LAYERS:,} items"
        if not isinstance(value, (tuple, list)) or len(value) > MAX_LAYERS:
            return wanted
        for entry in value:
            problem = _type_error(item, entry)
            if problem:
                return f"{wanted}, each {problem}"
    return None


def check_field_types(config: Any) -> None:
    """Refuses a dataclass config whose field holds a value of another type than declared: float fields take
    finite numbers (ints too; not bools, NaN or infinities), int fields numbers that are not NaN or infinite (the
    field's own check then refuses a fraction or a bool, with its range), bool fields bools, str fields strings,
    sequence fields up to ``MAX_LAYERS`` items of their item type, and an Optional field also None."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return
    for name, kind in _field_types(type(config)):
        value = getattr(config, name)
        problem = _type_error(kind, value)
        if problem:
            raise ValueError(f"Invalid {type(config).__name__}: {name} must be {problem}, got {quote(value)}.")


def check_max_abs_reward(config: Any) -> None:
    """``max_abs_reward``: None, or a finite number > 0."""
    bound = config.max_abs_reward
    if not (bound is None or (is_finite_number(bound) and bound > 0)):
        ConfigChecker(config).fail(
            f"max_abs_reward must be None (rewards as given) or a number > 0, got {quote(bound)}."
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
    check.positive_int(config, "n_step", "batch_size", "prefetch_size", "num_sgd_steps_per_step")
    check.positive_int(config, "variable_update_period", maximum=MAX_STEPS)
    check.positive_int(config, "min_replay_size", "max_replay_size", maximum=MAX_REPLAY_ITEMS)
    if config.max_replay_size < config.min_replay_size:
        check.fail(f"max_replay_size ({config.max_replay_size}) must be >= min_replay_size ({config.min_replay_size}).")
    check.positive(config, "samples_per_insert", "samples_per_insert_tolerance")
    check(bool(config.replay_table_name), "replay_table_name must be a non-empty string.")
    check_max_abs_reward(config)


def check_learning_rate_decay(config: Any) -> None:
    """``learning_rate_decay_steps`` (0: a constant step size, else optimiser steps of a linear decay) and
    ``final_learning_rate`` (> 0; with a decay, at most ``learning_rate``: a decay, not a warm-up; unused without)."""
    check = ConfigChecker(config)
    check.integer(config, "learning_rate_decay_steps", minimum=0, maximum=MAX_STEPS)
    check.positive(config, "final_learning_rate")
    check(
        config.learning_rate_decay_steps == 0 or config.final_learning_rate <= config.learning_rate,
        f"final_learning_rate ({config.final_learning_rate}) must be at most learning_rate ({config.learning_rate}): "
        "the step size decays.",
    )
