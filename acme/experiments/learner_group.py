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
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import launch
from acme.jax.multiprocess import LearnerGroup, agree, free_address, gather_integers
from acme.utils.connections import node_host

if TYPE_CHECKING:
    from acme.experiments.config import ExperimentConfig
    from acme.experiments.options import RunOptions

GROUP_LEFT_EXIT_CODE = 75
"""The exit status of a process that left its broken group so that the group restarts together."""

JOIN_SECONDS = 300.0
"""How long a process waits for process 0 to open the group, and the group for all its processes to connect."""


class GroupRendezvous:
    """Where the processes of a learner group meet: a service node of the program (``learner_rendezvous``).

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


GROUP_STRATEGIES = ("data", "fsdp")
"""The layouts a learner over several processes takes: the batch split over every process's devices, and under
fsdp the state too."""


def splits_state(sharding: Any) -> bool:
    """Whether ``sharding`` splits the learner's state over the devices (then, over several processes, the
    variables served and the state saved are gathered from all of them together)."""
    return sharding is not None and sharding.strategy == "fsdp"


def check_learner_group(config: ExperimentConfig, options: RunOptions) -> None:
    """Refuses a learner over several processes (``options.learner_processes``) that the config cannot run."""
    count = options.learner_processes
    if count == 1:
        return
    sharding = config.learner_sharding
    if sharding is None or sharding.strategy not in GROUP_STRATEGIES:
        raise ValueError(
            f"A learner over {count} processes splits each batch over their devices: give it the data or fsdp "
            "sharding (--sharding data|fsdp, and --devices for each process's count); replicated and rules over "
            "several processes are not built."
        )
    if isinstance(sharding.devices, tuple):
        raise ValueError(
            f"A learner over {count} processes takes a count of devices for each process (--devices N), not the "
            f"ids {sharding.devices}."
        )
    check_group_batch(config.builder.config.batch_size, count, sharding.devices or 1)


def check_group_batch(batch_size: int, processes: int, per_process: int) -> None:
    """Refuses a batch that ``processes`` processes of ``per_process`` devices each do not divide."""
    devices = processes * per_process
    if batch_size % devices:
        raise ValueError(
            f"A learner over {processes} processes of {per_process} device(s) each splits every batch of "
            f"{batch_size} over {devices} devices: use a batch_size that {devices} divides."
        )


def join_group(membership: GroupMembership, process_id: int) -> int:
    """Joins ``membership``'s group as process ``process_id``: process 0 opens a new incarnation at a coordinator
    address of its host, the others wait (up to ``JOIN_SECONDS``) for the newest one they have not joined. Must run
    before anything starts jax's devices. Returns the incarnation."""
    if process_id == 0:
        address = free_address(node_host())
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


class StateGathers:
    """The gathers every process of a group makes together when the learner's state is split over them (fsdp):
    process 0 asks (``variables``, ``want_save``), and in the next round of the lockstep all of them gather
    the variables it serves (``"policy"``) or the whole state it saves. ``keep`` (process 0) keeps the variables
    and hands the gathered state to ``save`` (which writes it as a checkpoint and returns its path)."""

    NAMES = ("policy",)
    """The variables a group with a split state serves (what actors, the evaluator and the inference server ask)."""

    def __init__(self, learner: Any, keep: bool = False, save: Callable[[Any], str] | None = None):
        self._learner = learner
        self._keep, self._save = keep, save
        self._variables: list | None = None
        self._fresh = threading.Condition()
        self._variables_wanted = threading.Event()
        self._save_wanted = threading.Event()
        self._saves = 0  # states saved so far
        self.last_saved: str | None = None  # the newest checkpoint path written through this

    def wants(self, final: bool = False) -> list[bool]:
        """This process's asks for the round: ``[variables, state]`` (the state always in the final round after
        the group agreed to stop, where process 0 writes its last checkpoint)."""
        if not self._keep:
            return [False, False]
        return [self._variables_wanted.is_set(), self._save is not None and (final or self._save_wanted.is_set())]

    def gather(self, variables: bool, state: bool) -> None:
        """Gathers what the round asks, together with the other processes."""
        layout = self._learner.layout
        if variables:
            self._variables_wanted.clear()
            fetched = layout.fetch(self._learner.get_variables(self.NAMES))
            with self._fresh:
                if self._keep:
                    self._variables = fetched
                self._fresh.notify_all()
        if state:
            self._save_wanted.clear()
            saved = self._learner.save()
            with self._fresh:
                if self._keep and self._save is not None:
                    self.last_saved = self._save(saved)
                self._saves += 1
                self._fresh.notify_all()

    def variables(self, names, timeout: float = JOIN_SECONDS) -> list:
        """Process 0: the newest gathered ``names`` (asking for fresher ones in the next round); waits for the
        first gather."""
        unknown = [name for name in names if name not in self.NAMES]
        if unknown:
            raise KeyError(f"A learner whose state is split over processes serves {list(self.NAMES)}, not {unknown}.")
        self._variables_wanted.set()
        with self._fresh:
            if not self._fresh.wait_for(lambda: self._variables is not None, timeout):
                raise TimeoutError(f"the learner group gathered no variables within {timeout:g} s.")
            by_name = dict(zip(self.NAMES, self._variables))
        return [by_name[name] for name in names]

    def want_save(self) -> None:
        """Process 0: gather and save the state in the next round."""
        self._save_wanted.set()

    def save_now(self, stepping: Callable[[], bool]) -> str:
        """Process 0: a checkpoint written in the next round, while the group steps (``stepping``)."""
        with self._fresh:
            target = self._saves + 1
        self.want_save()
        with self._fresh:
            while self._saves < target:
                if not stepping():
                    raise RuntimeError("The learner group has stopped: its split state cannot be gathered any more.")
                self._fresh.wait(0.05)
            return self.last_saved


def step_in_lockstep(
    learner: Any,
    iterator: Any,
    should_stop: Callable[[], bool],
    step_lock: threading.Lock,
    membership: GroupMembership,
    process_id: int,
    after_step: Callable[[], None] | None = None,
    gathers: StateGathers | None = None,
) -> None:
    """Steps ``learner`` together with the other processes of its group until one of them would stop: in every
    round each process says whether it would stop and whether its next batch is ready (``agree``, a collective);
    all of them step when every batch is ready, and all return once any would stop. ``after_step`` runs after
    each step, under ``step_lock``. With ``gathers`` (a state split over the processes; every process has them)
    each round also carries process 0's asks, which all of them gather together, and a last round after the stop
    lets it gather the state it saves. A failed collective (a process died) ends or restarts the group
    (``leave_broken_group``), unless the program is stopping anyway."""
    import jax

    ready = getattr(iterator, "ready", None)
    try:
        while True:
            asks = [] if gathers is None else gathers.wants()
            flags = agree([bool(should_stop()), ready is None or bool(ready()), *asks])
            if gathers is not None and flags[:, 2:].any():
                with step_lock:
                    gathers.gather(*flags[:, 2:].any(axis=0))
            if flags[:, 0].any():
                if gathers is not None:  # the last round: process 0 gathers the state it saves as the group stops
                    final = agree(gathers.wants(final=True))
                    with step_lock:
                        gathers.gather(*final.any(axis=0))
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
    "StateGathers",
    "check_group_batch",
    "check_learner_group",
    "check_same_restore",
    "splits_state",
    "join_group",
    "leave_broken_group",
    "step_in_lockstep",
]
