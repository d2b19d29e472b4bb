"""Environments written in JAX for the on-device loop (``reset``/``step`` that jit, vmap and scan), each checked
step for step against its reference; ``make_environment("jax:<name>")`` gives their host-side dm_env view."""

from __future__ import annotations

import difflib
from typing import Callable

from acme.environments.jax_native.base import FIRST, LAST, MID, JaxEnvironment, State, TimeStep
from acme.environments.jax_native.bsuite_tasks import Catch
from acme.environments.jax_native.classic_control import (
    Acrobot,
    CartPole,
    MemoryCartPole,
    MountainCar,
    MountainCarContinuous,
    Pendulum,
)
from acme.environments.jax_native.minatar import Asterix, Breakout, Freeway, MinAtar, Seaquest, SpaceInvaders
from acme.utils.quoting import quote

ENVIRONMENTS: dict[str, Callable[[], JaxEnvironment]] = {
    "CartPole-v1": CartPole,
    "MemoryCartPole-v1": MemoryCartPole,  # memory:CartPole-v1's twin: position and angle, no velocities
    "Acrobot-v1": Acrobot,
    "MountainCar-v0": MountainCar,
    "MountainCarContinuous-v0": MountainCarContinuous,
    "Pendulum-v1": Pendulum,
    "catch": Catch,  # bsuite's catch/0 .. catch/19 differ only in their seed
    "MinAtar-Asterix": Asterix,  # the minatar package's five games, with pgx's implementations
    "MinAtar-Breakout": Breakout,
    "MinAtar-Freeway": Freeway,
    "MinAtar-Seaquest": Seaquest,
    "MinAtar-SpaceInvaders": SpaceInvaders,
}


def make_jax_environment(name: str) -> JaxEnvironment:
    """The JAX-native environment ``name`` (e.g. ``"CartPole-v1"``); a clear error listing them otherwise."""
    if name not in ENVIRONMENTS:
        close = difflib.get_close_matches(str(name), list(ENVIRONMENTS), n=3)
        hint = f" Did you mean {', '.join('jax:' + c for c in close)}?" if close else ""
        raise ValueError(
            f"There is no JAX-native environment {quote(name)}.{hint} JAX-native environments: "
            f"{', '.join('jax:' + n for n in sorted(ENVIRONMENTS))}."
        )
    return ENVIRONMENTS[name]()


__all__ = [
    "ENVIRONMENTS",
    "FIRST",
    "LAST",
    "MID",
    "Acrobot",
    "Asterix",
    "Breakout",
    "CartPole",
    "Catch",
    "Freeway",
    "JaxEnvironment",
    "MemoryCartPole",
    "MinAtar",
    "MountainCar",
    "MountainCarContinuous",
    "Pendulum",
    "Seaquest",
    "SpaceInvaders",
    "State",
    "TimeStep",
    "make_jax_environment",
]
