"""Per-node configuration: resources to reserve and restart policy."""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import types
from typing import Mapping


def _check_amount(what: str, value: object, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number, got {value!r}")
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{what} must be finite, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value!r}")


@dataclasses.dataclass(frozen=True)
class Resources:
    """Resources a node reserves when it is scheduled (used by the Ray launcher).

    Attributes:
      num_cpus: CPUs to reserve; ``None`` (default) reserves none, so any
        number of nodes fit on a small machine.
      num_gpus: GPUs to reserve (fractions allowed).
      custom: custom resource name -> amount (Ray custom resources).
      cores: CPU cores of its machine that the node's process (every thread
        of it) runs on, e.g. ``(0,)``; ``None`` (default) leaves it to the
        operating system. Nodes pinned to different cores do not take each
        other's time (Linux only).
      cpu_devices: how many CPU devices the node's jax has (``jax_num_cpu_devices``): on a machine without
        accelerators, the devices a learner laid out over several devices runs on (they share the node's
        cores); ``None`` (default): jax's one.
    """

    num_cpus: float | None = None
    num_gpus: float = 0
    custom: Mapping[str, float] = dataclasses.field(default_factory=dict)
    cores: tuple[int, ...] | None = None
    cpu_devices: int | None = None

    def __post_init__(self) -> None:
        _check_amount("Resources.num_cpus", self.num_cpus, allow_none=True)
        _check_amount("Resources.num_gpus", self.num_gpus)
        if not isinstance(self.custom, Mapping):
            raise TypeError(f"Resources.custom must be a mapping, got {self.custom!r}")
        for name, amount in self.custom.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"Resources.custom keys must be non-empty strings, got {name!r}")
            _check_amount(f"Resources.custom[{name!r}]", amount)
        # Freeze the mapping so the dataclass is really immutable.
        object.__setattr__(self, "custom", types.MappingProxyType(dict(self.custom)))
        if self.cores is not None:
            cores = self.cores
            if (
                isinstance(cores, (str, bytes))
                or not hasattr(cores, "__iter__")
                or not (cores := tuple(cores))
                or not all(isinstance(c, numbers.Integral) and not isinstance(c, bool) and c >= 0 for c in cores)
                or len(set(cores)) != len(cores)
            ):
                raise ValueError(
                    f"Resources.cores must be a non-empty sequence of distinct core numbers >= 0 (e.g. (0,) or "
                    f"(2, 3)), or None, got {self.cores!r}"
                )
            object.__setattr__(self, "cores", tuple(int(c) for c in cores))
        if self.cpu_devices is not None and (
            isinstance(self.cpu_devices, bool)
            or not isinstance(self.cpu_devices, numbers.Integral)
            or self.cpu_devices < 1
        ):
            raise ValueError(f"Resources.cpu_devices must be an integer >= 1 or None, got {self.cpu_devices!r}")

    def _key(self) -> tuple:
        return (self.num_cpus, self.num_gpus, dict(self.custom), self.cores, self.cpu_devices)

    def __hash__(self) -> int:
        return hash((self.num_cpus, self.num_gpus, frozenset(self.custom.items()), self.cores, self.cpu_devices))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resources):
            return NotImplemented
        return self._key() == other._key()

    def __reduce__(self):
        return (Resources, self._key())

    @property
    def thread_budget(self) -> int | None:
        """Threads the node's numerical libraries may use: its reserved CPUs (at least 1), else the number of
        cores it is pinned to, or None when it names neither (their defaults then apply)."""
        if self.num_cpus:
            return max(1, int(self.num_cpus))
        return len(self.cores) if self.cores else None


CORES_VARIABLE = "LAUNCH_NODE_CORES"  # how the Ray launcher tells a node's process its Resources.cores


def pin_process(cores: tuple[int, ...]) -> None:
    """Runs every thread of this process (and so every thread it starts later) on ``cores`` only.

    Raises ``ValueError`` naming the cores this process may use when ``cores`` holds others.
    """
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError(f"Resources.cores {tuple(cores)} needs Linux's sched_setaffinity, which this system lacks.")
    allowed = os.sched_getaffinity(0)
    if not set(cores) <= allowed:
        raise ValueError(
            f"Resources.cores {tuple(cores)} names cores this machine does not offer the node's process; it may run "
            f"on {sorted(allowed)}."
        )
    _pin_every_thread(set(cores))


_MAX_PINNING_PASSES = 1000


def _pin_every_thread(cores: set[int]) -> None:
    """Pins every thread of this process, walking its threads again until a whole pass finds none outside ``cores``.

    One walk is not enough: a thread not yet pinned can start another during the walk, and the new thread keeps its
    parent's old mask. Threads started by pinned threads inherit the pinning, so the passes end once the threads that
    start others are pinned.
    """
    for _ in range(_MAX_PINNING_PASSES):
        moved = 0
        for thread_id in os.listdir("/proc/self/task"):
            try:
                if os.sched_getaffinity(int(thread_id)) != cores:
                    os.sched_setaffinity(int(thread_id), cores)
                    moved += 1
            except (ProcessLookupError, FileNotFoundError):  # the thread ended meanwhile
                continue
        if moved == 0:
            return
    raise RuntimeError(
        f"pinning this process to cores {sorted(cores)} did not settle after {_MAX_PINNING_PASSES} passes over its "
        "threads: threads keep starting threads faster than they can be pinned."
    )


CPU_DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"


def cpu_devices_environment(count: int, xla_flags: str | None) -> dict[str, str]:
    """Environment variables that give a process ``count`` CPU devices when its jax starts its backend: jax's own
    variable (``jax_num_cpu_devices``, where the jax version has it) and XLA's flag, which older versions (the
    reverb stack's jax 0.4.34) read instead and newer ones read when the variable is absent. ``xla_flags`` is the
    ``XLA_FLAGS`` the process would otherwise have (its thread settings); a device count in it is replaced."""
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    kept = [flag for flag in (xla_flags or "").split() if not flag.startswith(CPU_DEVICE_COUNT_FLAG)]
    return {"JAX_NUM_CPU_DEVICES": str(count), "XLA_FLAGS": " ".join([*kept, f"{CPU_DEVICE_COUNT_FLAG}={count}"])}


def thread_environment(num_threads: int) -> dict[str, str]:
    """Environment variables that hold XLA (jax), TensorFlow, OpenMP and BLAS to ``num_threads`` threads in a
    process that sets them before importing those libraries."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive integer, got {num_threads!r}")
    threads = str(num_threads)
    eigen = "false" if num_threads == 1 else "true"
    return {
        "XLA_FLAGS": f"--xla_cpu_multi_thread_eigen={eigen} intra_op_parallelism_threads={threads}",
        "OMP_NUM_THREADS": threads,
        "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "TF_NUM_INTRAOP_THREADS": threads,
        "TF_NUM_INTEROP_THREADS": threads,
    }


@dataclasses.dataclass(frozen=True)
class RestartPolicy:
    """How often a node whose process dies is restarted (Ray launcher).

    Only process deaths (crash, SIGKILL, lost machine) cause restarts; Python
    exceptions raised by the node's code are never retried.

    Attributes:
      max_restarts: number of restarts allowed (0 = never restart).
    """

    max_restarts: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, numbers.Integral):
            raise TypeError(f"RestartPolicy.max_restarts must be an int, got {self.max_restarts!r}")
        if self.max_restarts < 0:
            raise ValueError(f"RestartPolicy.max_restarts must be >= 0, got {self.max_restarts!r}")
