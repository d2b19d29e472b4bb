"""Environment factory."""

from acme.environments.factory import (
    EXAMPLE_IDS,
    KNOWN_PREFIXES,
    UnknownEnvironmentError,
    make_environment,
    make_environment_batch,
)

__all__ = ["EXAMPLE_IDS", "KNOWN_PREFIXES", "UnknownEnvironmentError", "make_environment", "make_environment_batch"]
