"""Per-node configuration: resources to reserve and restart policy."""

from __future__ import annotations

import dataclasses
import math
import numbers
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
    """

    num_cpus: float | None = None
    num_gpus: float = 0
    custom: Mapping[str, float] = dataclasses.field(default_factory=dict)

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

    def __hash__(self) -> int:
        return hash((self.num_cpus, self.num_gpus, frozenset(self.custom.items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resources):
            return NotImplemented
        return (self.num_cpus, self.num_gpus, dict(self.custom)) == (other.num_cpus, other.num_gpus, dict(other.custom))

    def __reduce__(self):
        return (Resources, (self.num_cpus, self.num_gpus, dict(self.custom)))

    @property
    def thread_budget(self) -> int | None:
        """Threads the node's numerical libraries may use: its reserved CPUs (at least 1), or None when it
        reserves none (their defaults then apply)."""
        return max(1, int(self.num_cpus)) if self.num_cpus else None


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
