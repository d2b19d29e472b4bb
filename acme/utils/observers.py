"""Observers: callbacks that compute extra per-episode metrics in an EnvironmentLoop."""

from __future__ import annotations

from typing import Any, Mapping, Protocol

import dm_env
import numpy as np


class EnvLoopObserver(Protocol):
    """Sees every step of an EnvironmentLoop and adds metrics to its episode log."""

    def observe_first(self, env: dm_env.Environment, timestep: dm_env.TimeStep) -> None: ...

    def observe(self, env: dm_env.Environment, timestep: dm_env.TimeStep, action: Any) -> None: ...

    def get_metrics(self) -> Mapping[str, Any]: ...


class ActionHistogramObserver:
    """Reports, per episode, how often each discrete action was taken."""

    def __init__(self):
        self._counts: dict[int, int] = {}

    def observe_first(self, env, timestep) -> None:
        self._counts = {}

    def observe(self, env, timestep, action) -> None:
        key = int(np.asarray(action))
        self._counts[key] = self._counts.get(key, 0) + 1

    def get_metrics(self) -> Mapping[str, Any]:
        return {f"action_{k}_count": v for k, v in sorted(self._counts.items())}
