"""Environment factory."""

from acme.environments.factory import (
    EXAMPLE_IDS,
    KNOWN_PREFIXES,
    UnknownEnvironmentError,
    make_environment,
)

__all__ = ["EXAMPLE_IDS", "KNOWN_PREFIXES", "UnknownEnvironmentError", "make_environment"]
