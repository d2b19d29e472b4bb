"""A learner over several processes in a distributed program: where its processes meet, how they step together,
and how they fail and restart as one.

Process 0 (the ``LearnerNode``) opens each incarnation of the group at a coordinator address of its own host (its
Ray node's address: loopback in a local run, ``--bind-address``, or a cluster machine's) through the program's
``GroupRendezvous`` node; every other process (``LearnerProcess``) joins the newest incarnation it has not joined
yet. When a process dies, the collectives of the others fail at once (gloo sees the connection close) and, with
restarts, each of them leaves its process (``leave_broken_group``) so that Ray restarts every process of the group;
the restarted ones meet in the next incarnation and each restores the newest checkpoint, so no process carries a
state the others do not have. Without restarts the run ends with the failure.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import launch
from acme.jax.multiprocess import LearnerGroup, agree, gather_integers

if TYPE_CHECKING:
    from acme.experiments.config import ExperimentConfig
    from acme.experiments.options import RunOptions

GROUP_LEFT_EXIT_CODE = 75
"""The exit status of a process that left its broken group so that the group restarts together."""

JOIN_SECONDS = 300.0
"""How long a process waits for process 0 to open the group, and the group for all its processes to connect."""


class GroupRendezvous:
    """Where the processes of a learner group meet: a service node of the program (``learner_group/rendezvous``).

    ``open`` (process 0) starts a new incarnation of the group at a coordinator address; ``coordinator_for`` gives
    another process the newest incarnation it has not joined yet, or None until process 0 opens one. A process
    restarted after a failure thus waits for the next incarnation instead of joining the broken one.
    """

    def __init__(self, num_processes: int):
        self._num_processes = num_processes
        self._lock = threading.Lock()
        self._incarnations: list[tuple[str, set[int]]] = []  # (coordinator address, the processes that joined)

    def open(self, address: str) -> int:
        """Process 0 opens incarnation ``n`` (returned, from 1) at ``address``."""
        with self._lock:
            self._incarnations.append((address, {0}))
            return len(self._incarnations)

    def coordinator_for(self, process_id: int) -> tuple[int, str] | None:
        """``(incarnation, address)`` for process ``process_id`` (1 or more) to join, once; None while there is
        none it has not joined."""
        if not 0 < process_id < self._num_processes:
            raise ValueError(f"process_id must be 1 to {self._num_processes - 1}, got {process_id!r}.")
        with self._lock:
            if not self._incarnations:
                return None
            address, joined = self._incarnations[-1]
            if process_id in joined:
                return None
            joined.add(process_id)
            return len(self._incarnations), address

    def incarnations(self) -> int:
        """How many times process 0 opened the group (1 + the group's restarts)."""
        with self._lock:
            return len(self._incarnations)


class GroupMembership(NamedTuple):
    """What a process of a learner group is given: the group, the rendezvous node's handle, and whether the group
    restarts after a failure (with checkpointing and learner restarts) or ends the run."""

    group: LearnerGroup
    rendezvous: Any
    restartable: bool


def check_learner_group(config: ExperimentConfig, options: RunOptions) -> None:
    """Refuses a learner over several processes (``options.learner_processes``) that the config cannot run."""
    count = options.learner_processes
    if count == 1:
        return
    sharding = config.learner_sharding
    if sharding is None or sharding.strategy != "data":
        raise ValueError(
            f"A learner over {count} processes splits each batch over their devices: give it the data sharding "
            "(--sharding data, and --devices for each process's count); replicated, fsdp and rules over several "
            "processes are not built yet."
        )
    if isinstance(sharding.devices, tuple):
        raise ValueError(
            f"A learner over {count} processes takes a count of devices for each process (--devices N), not the "
            f"ids {sharding.devices}."
        )
    batch_size = config.builder.config.batch_size
    per_device = count * (sharding.devices or 1)
    if batch_size % per_device:
        raise ValueError(
            f"A learner over {count} processes of {sharding.devices or 1} device(s) each splits every batch of "
            f"{batch_size} over {per_device} devices: use a batch_size that {per_device} divides."
        )


def _coordinator_address() -> str:
    """``host:port`` on the address other nodes reach this process at, with a port free now."""
    from acme.utils.connections import node_host

    host = node_host()
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def join_group(membership: GroupMembership, process_id: int) -> int:
    """Joins ``membership``'s group as process ``process_id``: process 0 opens a new incarnation at a coordinator
    address of its host, the others wait (up to ``JOIN_SECONDS``) for the newest one they have not joined. Must run
    before anything starts jax's devices. Returns the incarnation."""
    if process_id == 0:
        address = _coordinator_address()
        incarnation = membership.rendezvous.open(address)
    else:
        deadline = time.monotonic() + JOIN_SECONDS
        while (found := membership.rendezvous.coordinator_for(process_id)) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"learner group process {process_id}: process 0 opened no group to join within {JOIN_SECONDS:g} s."
                )
            time.sleep(0.05)
        incarnation, address = found
    membership.group.join(process_id, address, timeout_seconds=int(JOIN_SECONDS))
    print(
        f"learner group: process {process_id} of {membership.group.num_processes} (pid {os.getpid()}) joined "
        f"incarnation {incarnation} (coordinator {address}).",
        flush=True,
    )
    return incarnation


def check_same_restore(learner_steps: int) -> None:
    """Refuses to go on unless every process of the group restored the same learner step (a collective)."""
    steps = gather_integers([learner_steps])[:, 0]
    if len(set(steps.tolist())) > 1:
        raise RuntimeError(
            f"The processes of the learner group restored different checkpoints (learner steps {steps.tolist()} in "
            "process order); they must start from one state."
        )


def leave_broken_group(process_id: int, error: BaseException, restartable: bool) -> None:
    """After a collective of the group failed (another process died): with restarts, ends this process so that Ray
    restarts it with the rest of the group; else raises, which ends the run."""
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    message = f"learner group: a collective of process {process_id} failed ({reason[:300]})"
    if not restartable:
        raise RuntimeError(
            f"{message}: another process of the group has most likely died. With checkpointing and learner "
            "restarts the group restarts from its last checkpoint instead."
        ) from error
    print(f"{message}; this process exits so that the whole group restarts from the last checkpoint.", flush=True)
    sys.stderr.flush()
    os._exit(GROUP_LEFT_EXIT_CODE)


def step_in_lockstep(
    learner: Any,
    iterator: Any,
    should_stop: Callable[[], bool],
    step_lock: threading.Lock,
    membership: GroupMembership,
    process_id: int,
    after_step: Callable[[], None] | None = None,
) -> None:
    """Steps ``learner`` together with the other processes of its group until one of them would stop: in every
    round each process says whether it would stop and whether its next batch is ready (``agree``, a collective);
    all of them step when every batch is ready, and all return once any would stop. ``after_step`` runs after
    each step, under ``step_lock``. A failed collective (a process died) ends or restarts the group
    (``leave_broken_group``), unless the program is stopping anyway."""
    import jax

    ready = getattr(iterator, "ready", None)
    try:
        while True:
            flags = agree([bool(should_stop()), ready is None or bool(ready())])
            if flags[:, 0].any():
                return
            if not flags[:, 1].all():
                time.sleep(0.001)
                continue
            with step_lock:
                learner.step()
                if after_step is not None:
                    after_step()
    except jax.errors.JaxRuntimeError as error:
        if launch.stop_requested():
            return  # the program is ending; another process of the group went first
        leave_broken_group(process_id, error, membership.restartable)


__all__ = [
    "GROUP_LEFT_EXIT_CODE",
    "GroupMembership",
    "GroupRendezvous",
    "check_learner_group",
    "check_same_restore",
    "join_group",
    "leave_broken_group",
    "step_in_lockstep",
]
