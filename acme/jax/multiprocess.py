"""One learner over several processes: jax's multi-controller runtime, joined before jax starts its devices.

Each process of a learner group calls ``join_learner_group`` first; after it,
``jax.devices()`` lists every process's devices, so a ``LearnerSharding``'s
mesh spans the group and the same jitted update runs in every process on its
own devices, the collectives between processes (XLA's; gloo over TCP on
CPUs) inserted by the compiler as between the devices of one process. Each
process feeds the rows of the batch that its devices hold
(``Layout.global_batch``) and reads back the replicated metrics.
"""

from __future__ import annotations

import numbers
import re

import jax

_ADDRESS = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def join_learner_group(
    coordinator_address: str, num_processes: int, process_id: int, local_cpu_devices: int | None = None
) -> None:
    """Makes this process the ``process_id``-th of ``num_processes`` that hold one learner; the coordinator (at
    ``coordinator_address``, ``host:port``, served by process 0) introduces them. ``local_cpu_devices`` gives
    this process that many CPU devices (for a group on one machine without accelerators).

    Must run before anything starts jax's devices (an array, ``jax.devices()``): afterwards jax keeps the ones it
    has, and this raises.
    """
    if not isinstance(coordinator_address, str) or not _ADDRESS.match(coordinator_address):
        raise ValueError(f"coordinator_address must be 'host:port', got {coordinator_address!r}.")
    num_processes = _check_count("num_processes", num_processes, 1)
    process_id = _check_count("process_id", process_id, 0)
    if process_id >= num_processes:
        raise ValueError(f"process_id must be below num_processes ({num_processes}), got {process_id}.")
    if local_cpu_devices is not None:
        jax.config.update("jax_num_cpu_devices", _check_count("local_cpu_devices", local_cpu_devices, 1))
    jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives between processes
    jax.distributed.initialize(coordinator_address, num_processes=num_processes, process_id=process_id)


def spans_processes(mesh) -> bool:
    """Whether ``mesh`` holds devices of other processes than this one."""
    here = jax.process_index()
    return any(device.process_index != here for device in mesh.devices.flat)


__all__ = ["join_learner_group", "spans_processes"]
