"""Value types of the command line's flags.

Each is an argparse ``type=``: it turns the text into a number or refuses it with
a message that says what was given and what would be accepted, and argparse then
exits with status 2. A value is never replaced by a default.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

from acme.agents.config_checks import MAX_BATCH_DIMENSION, MAX_STEPS
from acme.utils.quoting import quote, shorten

# JAX keys distinguish seeds only below 2**32 (PRNGKey(2**32) is PRNGKey(0)); gymnasium refuses negatives.
MAX_SEED = 2**32 - 1


def _describe_range(kind: str, minimum: float, maximum: float | None, strict: bool) -> str:
    """'an integer >= 1', 'a number > 0', 'an integer >= 0 and at most 9' (as ``RunOptions`` words its counts)."""
    if maximum is not None:
        return f"{kind} >= {minimum} and at most {maximum:,}"
    return f"{kind} {'>' if strict else '>='} {minimum}"


def integer(minimum: int, maximum: int | None = None, note: str = "") -> Callable[[str], int]:
    """A flag type reading an integer in ``[minimum, maximum]``; ``note`` (e.g. "0: none") follows the range."""
    expected = _describe_range("an integer", minimum, maximum, strict=False) + (f" ({note})" if note else "")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {expected}, got {quote(text)}.") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be {expected}, got {value}.")
        return value

    parse.__name__ = "integer"  # argparse names the type in some of its own messages
    return parse


def number(minimum: float, strict: bool, note: str = "") -> Callable[[str], float]:
    """A flag type reading a finite number above ``minimum`` (``strict``) or at least ``minimum``."""
    expected = _describe_range("a number", minimum, None, strict) + (f" ({note})" if note else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {expected}, got {quote(text)}.") from None
        if not math.isfinite(value) or value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {expected}, got {shorten(text)}.")
        return value

    parse.__name__ = "number"
    return parse


positive_integer = integer(1)
seed = integer(0, MAX_SEED)
# Bounded counts (acme.agents.config_checks says why each bound): a value past one is a typo, not a run.
step_budget = integer(1, MAX_STEPS)  # environment or learner steps: --max-steps, --checkpoint-every-steps
step_interval = integer(0, MAX_STEPS, note="0: no evaluation")  # --eval-every
batch_count = integer(1, MAX_BATCH_DIMENSION)  # environments, seeds, episodes: a dimension of what runs at once
