"""CPU devices for this process on a machine without accelerators, on every jax the library supports."""

from __future__ import annotations

import os

import jax


def request_cpu_devices(count: int) -> None:
    """Gives this process ``count`` CPU devices when jax starts its backend (they share the machine's cores).

    On a jax with ``jax_num_cpu_devices`` this sets it, and raises ``RuntimeError`` if the backend has already
    started; on an older one (the reverb stack's 0.4.34) it sets XLA's device-count flag in ``XLA_FLAGS``, which
    takes effect only if the backend has not started (the devices are checked where they are used).
    """
    try:
        jax.config.update("jax_num_cpu_devices", count)
    except AttributeError:  # a jax without the option: XLA reads its flag when the backend starts
        from launch.config import cpu_devices_environment  # here: importing acme loads no runner

        os.environ.update(cpu_devices_environment(count, os.environ.get("XLA_FLAGS")))
