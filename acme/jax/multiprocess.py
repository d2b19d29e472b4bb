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

import dataclasses
import numbers
import re
import socket
from typing import Any, Sequence

import jax
import numpy as np

from acme.jax.cpu_devices import request_cpu_devices

HEARTBEAT_SECONDS = 15
"""A process of a group that has not been heard from for this long is dead to the others: jax's coordination
service then ends every process of the group (which a launcher restarts together; ``acme.experiments.
learner_group``). jax's default, 100 s, would leave the survivors blocked that long."""

_ADDRESS = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def join_learner_group(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    local_cpu_devices: int | None = None,
    timeout_seconds: int = 300,
) -> None:
    """Makes this process the ``process_id``-th of ``num_processes`` that hold one learner; the coordinator (at
    ``coordinator_address``, ``host:port``, served by process 0 on that address only) introduces them, within
    ``timeout_seconds``. ``local_cpu_devices`` gives this process that many CPU devices (for a group on one machine
    without accelerators).

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
        request_cpu_devices(_check_count("local_cpu_devices", local_cpu_devices, 1))
    jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives between processes
    jax.distributed.initialize(
        coordinator_address,
        num_processes=num_processes,
        process_id=process_id,
        initialization_timeout=_check_count("timeout_seconds", timeout_seconds, 1),
        heartbeat_timeout_seconds=HEARTBEAT_SECONDS,
        coordinator_bind_address=coordinator_address if process_id == 0 else None,
    )


def spans_processes(mesh) -> bool:
    """Whether ``mesh`` holds devices of other processes than this one."""
    here = jax.process_index()
    return any(device.process_index != here for device in mesh.devices.flat)


def gather_integers(values: Sequence[int]) -> np.ndarray:
    """Every process's ``values``, ``[num_processes, len(values)]`` int32 in process order: a collective that every
    process of the group calls with as many values."""
    from jax.experimental import multihost_utils

    gathered = multihost_utils.process_allgather(np.asarray(values, np.int32))
    return np.asarray(gathered).reshape(jax.process_count(), len(values))


def agree(flags: Sequence[bool]) -> np.ndarray:
    """Every process's ``flags``, ``[num_processes, len(flags)]`` booleans in process order: a collective that
    every process of the group calls with as many flags, so that all of them decide alike (step, stop)."""
    return gather_integers([int(bool(flag)) for flag in flags]).astype(bool)


def free_address(host: str = "127.0.0.1") -> str:
    """``host:port`` (``[host]:port`` for IPv6) with a port free on ``host`` now, for a group's coordinator."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclasses.dataclass(frozen=True)
class LearnerGroup:
    """The processes that hold one learner together: how many, and how many CPU devices each has (on a machine
    without accelerators; None: its accelerators, or jax's one CPU)."""

    num_processes: int
    local_cpu_devices: int | None = None

    def __post_init__(self) -> None:
        _check_count("num_processes", self.num_processes, 2)
        if self.local_cpu_devices is not None:
            _check_count("local_cpu_devices", self.local_cpu_devices, 1)

    def join(self, process_id: int, coordinator_address: str, timeout_seconds: int = 300) -> None:
        """Joins as process ``process_id``, introduced by the coordinator at ``coordinator_address``
        (``join_learner_group``)."""
        join_learner_group(coordinator_address, self.num_processes, process_id, self.local_cpu_devices, timeout_seconds)

    def local_batch_size(self, batch_size: int) -> int:
        """The rows of each batch one process samples; refuses a batch the processes do not divide."""
        if batch_size % self.num_processes:
            raise ValueError(
                f"A learner over {self.num_processes} processes splits each batch of {batch_size} between them: "
                f"use a batch_size that {self.num_processes} divides."
            )
        return batch_size // self.num_processes

    def sharding(self, sharding: Any) -> Any:
        """``sharding`` (a ``LearnerSharding`` whose ``devices`` count is each process's) over every device of
        the group."""
        return dataclasses.replace(sharding, devices=None)


__all__ = [
    "LearnerGroup",
    "agree",
    "free_address",
    "gather_integers",
    "join_learner_group",
    "spans_processes",
]
