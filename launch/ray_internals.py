"""The two places the launcher reaches into Ray's private API, kept here so that a Ray upgrade has one file to check.

Both are needed by Ray 2.60 (the version both stacks pin, constraints*.txt) and
were written against it; neither has a public equivalent there. Each degrades
safely when the private name is gone: the loopback switch is then not made
(``ray_launcher._start_local_ray`` checks the address Ray chose and shuts Ray
down rather than run exposed), and the config refresh is skipped with a debug
message.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator

logger = logging.getLogger("launch")


@contextlib.contextmanager
def node_address_on_loopback(ray: Any) -> Iterator[None]:
    """Makes a local Ray instance take 127.0.0.1 as its node address.

    Ray turns a loopback ``_node_ip_address`` into the machine's routable
    address unless clusters are disabled, which is how it runs on macOS and
    Windows (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``). That switch is read from
    ``ray._private.ray_constants`` when Ray picks its node address; it is set
    for the duration of ``ray.init()`` only. ``_start_local_ray`` checks the
    outcome, so a Ray without this switch fails closed.
    """
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is None or not hasattr(constants, "ENABLE_RAY_CLUSTER"):
        yield
        return
    before = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before


def refresh_cached_config() -> None:
    """Makes Ray re-read the configuration it caches per process (its auth mode among it), after ``RAY_*``
    environment variables changed: ``ray._raylet`` (Ray 2.60)."""
    try:
        from ray._raylet import AuthenticationTokenLoader, Config

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()
    except Exception as e:  # a private API: any failure only means the cache stays as it was
        logger.debug("launch: could not refresh Ray's cached config: %s", e)
