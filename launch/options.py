"""``LaunchOptions``: how ``launch`` runs a program, described and checked in one place."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import numbers
from typing import Callable, Iterator

from launch import network
from launch.placement import Placement

LAUNCHERS = ("threads", "ray")

_UNSAID = object()


def python_spelling(name: str, *value: object) -> str:
    """How an error names an option given in Python: ``bind_address``, or ``launcher='ray'`` with a value."""
    return f"{name}={value[0]!r}" if value else name


# Spelling(name) or Spelling(name, value) -> how an error message names an option; a command line names its flags.
Spelling = Callable[..., str]
_SPELLING: contextvars.ContextVar[Spelling] = contextvars.ContextVar("option_spelling", default=python_spelling)


@contextlib.contextmanager
def spelled_as(spelling: Spelling) -> Iterator[None]:
    """Options checked inside name themselves in errors with ``spelling`` (e.g. as command-line flags)."""
    token = _SPELLING.set(spelling)
    try:
        yield
    finally:
        _SPELLING.reset(token)


def spelling() -> Spelling:
    """The spelling options are checked with now."""
    return _SPELLING.get()


def say(name: str, value: object = _UNSAID) -> str:
    """``name`` (with ``value``) as the options being checked are spelled (``spelled_as``)."""
    return _SPELLING.get()(name) if value is _UNSAID else _SPELLING.get()(name, value)


@dataclasses.dataclass(frozen=True)
class LaunchOptions:
    """How ``launch`` runs a program. Every value is checked on construction, before anything starts.

    Attributes:
      launcher: ``"threads"`` (every node a thread of this process) or ``"ray"`` (every node a Ray actor).
      address: Ray only. ``None`` starts a local Ray instance that is shut down at the end; otherwise the
        address of a running cluster to join (only the program's own actors are killed at the end). If Ray is
        already initialized in this process, that connection is reused. A local Ray instance, and every reverb
        node of the threads launcher or of a local Ray instance, listens on loopback only.
      bind_address: Ray only, when it starts a local instance: an IP address of this machine that Ray takes as
        its node address, so that other machines can reach it. Ray then listens on every interface with its
        gRPC servers (on ``bind_address`` with its HTTP ones), and so do reverb nodes. ``None`` keeps everything
        on loopback.
      dashboard: Ray only, when it starts a local instance: also start Ray's dashboard (on 127.0.0.1, or on
        ``bind_address``).
      placement: Ray only: node label or group -> ``launch.Resources`` the node (each node of the group)
        reserves instead of those it was added with; Ray places it on a machine that has them. A label wins over
        its group, an inner group over an outer one (see ``launch.placement``).
      timeout: seconds after which the program is stopped and ``LaunchTimeout`` is raised (None: no limit).
      grace_period: seconds given to nodes to return once stop is requested.
    """

    launcher: str = "threads"
    address: str | None = None
    bind_address: str | None = None
    dashboard: bool = False
    placement: Placement | None = None
    timeout: float | None = None
    grace_period: float = 5.0

    def __post_init__(self) -> None:
        if self.launcher not in LAUNCHERS:
            raise ValueError(
                f"unknown launcher {self.launcher!r}; accepted launchers: " + ", ".join(map(repr, LAUNCHERS))
            )
        ray = say("launcher", "ray")
        ray_only = {
            "address": self.address is not None,
            "bind_address": self.bind_address is not None,
            "dashboard": bool(self.dashboard),
            "placement": self.placement is not None,
        }
        for name, given in ray_only.items():
            if given and self.launcher != "ray":
                raise ValueError(
                    f"{say(name)} is only used by the ray launcher, not the {self.launcher} launcher, whose nodes "
                    f"are threads of this process. Use {ray}, or leave {say(name)} out."
                )
        for name in ("bind_address", "dashboard"):
            if ray_only[name] and self.address is not None:
                raise ValueError(
                    f"{say(name)} applies to a Ray instance that this run starts; a cluster joined with "
                    f"{say('address', self.address)} keeps the addresses and dashboard it was started with (ray "
                    "start --node-ip-address, --include-dashboard)."
                )
        if self.bind_address is not None:
            try:
                network.check_bind_address(self.bind_address)
            except ValueError as error:
                raise ValueError(f"{say('bind_address')}: {error}") from None
        _check_seconds("timeout", self.timeout, allow_none=True)
        _check_seconds("grace_period", self.grace_period)


def _check_seconds(name: str, value: object, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or value < 0:
        accepted = "a number of seconds >= 0" + (" or None" if allow_none else "")
        raise ValueError(f"{say(name)} must be {accepted}, got {value!r}")
