"""User input echoed in an error message, cut to a readable length.

An error should show what it refuses, but a 100,000-character environment id or a nested list of a million
items is not worth printing whole (and formatting it can take longer than the run would). ``quote`` shows the
first ``ECHO_LIMIT`` characters and says how long the rest is.
"""

from __future__ import annotations

import reprlib
from typing import Any

ECHO_LIMIT = 80  # characters of user input an error message shows

_REPR = reprlib.Repr()
_REPR.maxlevel = 3  # nested containers are shown three levels deep,
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 8  # and eight items each
_REPR.maxstring = _REPR.maxother = ECHO_LIMIT
_REPR.maxlong = 40  # digits of an integer


def shorten(text: Any, limit: int = ECHO_LIMIT) -> str:
    """``str(text)`` unquoted (a path, a name in a sentence), its first ``limit`` characters and
    ``... (N characters)`` when it is longer."""
    text = text if isinstance(text, str) else quote(text, limit)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def quote(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` for an error message: strings past ``limit`` characters as their first ``limit`` and
    ``... (N characters)``, containers shortened (never formatted whole), anything else cut at ``limit``."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    try:
        text = _REPR.repr(value)
    except ValueError:  # an integer past Python's digit limit for str()
        if isinstance(value, int):
            return f"<an integer of {value.bit_length():,} bits>"
        return f"<a {type(value).__name__}>"
    return text if len(text) <= limit else f"{text[:limit]}... ({type(value).__name__})"
