"""Checkpoints of a whole experiment: learner state, step counts, the training loop's progress and replay.

One checkpoint is a directory ``<directory>/ckpt-<learner step>`` written by
``acme.utils.checkpoint_files.Checkpointer`` (atomic, checksummed, the newest
``keep`` kept). It holds the learner's state as a pytree and, in its metadata,
the counters, the loop's progress (actor steps, evaluations so far) and the
size of every replay table. Local replay tables (``acme.replay``) are saved in
the same tree as the learner state. Reverb writes its own checkpoint of the
tables into ``<directory>/.replay-staging``; the checkpoint directory then
takes it in whole (``ckpt-<step>/replay``, checksummed like the rest), so the
replay always matches the learner state saved with it. A server restored from
a checkpoint loads exactly that copy (reverb's ``fallback_checkpoint_path``).

The replay staging directory and the checkpoints must be on one file system
(and, for a distributed run on several machines, one that the replay node and
the learner share).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import time
from typing import Any, Mapping

from acme.agents.config_checks import is_finite_number, is_integer
from acme.replay.local_client import LocalTablesClient
from acme.utils.checkpoint_files import (
    Checkpointer,
    CheckpointError,
    CheckpointMismatchError,
    ensure_writable_dir,
    signatures_match,
    tree_signature,
)

REPLAY = "replay"  # the attached reverb checkpoint inside ckpt-<step>
STAGING = ".replay-staging"  # where the replay server writes before a checkpoint takes the files
_OWN_ENTRY = re.compile(r"^(ckpt-\d+|\.tmp-.*|\.replay-staging|\.lock)$")


@dataclasses.dataclass(frozen=True)
class CheckpointingConfig:
    """Where and how often an experiment is checkpointed.

    Attributes:
      directory: the experiment's checkpoint directory. Starting an experiment
        with a directory that holds checkpoints resumes from the newest one.
      every_minutes: save when this many minutes have passed since the last save.
      every_learner_steps: save when the learner has taken this many steps since
        the last save. With both set, whichever comes first; at least one is needed.
      keep: how many checkpoints to keep (older ones are deleted once a newer is complete).
      replay: also checkpoint the reverb tables (their items and rate limiters).
    """

    directory: str
    every_minutes: float | None = 10.0
    every_learner_steps: int | None = None
    keep: int = 3
    replay: bool = True

    def __post_init__(self):
        if not isinstance(self.directory, (str, os.PathLike)) or not str(self.directory):
            raise ValueError(f"directory must be a non-empty path, got {self.directory!r}.")
        object.__setattr__(self, "directory", os.path.abspath(str(self.directory)))
        if self.every_minutes is None and self.every_learner_steps is None:
            raise ValueError("Give every_minutes, every_learner_steps or both: when should checkpoints be written?")
        minutes, steps = self.every_minutes, self.every_learner_steps
        if minutes is not None and not (is_finite_number(minutes) and minutes > 0):
            raise ValueError(f"every_minutes must be a positive number of minutes or None, got {minutes!r}.")
        if steps is not None and not (is_integer(steps) and steps >= 1):
            raise ValueError(f"every_learner_steps must be a positive integer or None, got {steps!r}.")
        if not is_integer(self.keep) or self.keep < 1:
            raise ValueError(f"keep must be an integer >= 1 (checkpoints to keep), got {self.keep!r}.")
        if not isinstance(self.replay, bool):
            raise ValueError(f"replay must be True or False, got {self.replay!r}.")


class CheckpointClock:
    """When a checkpoint is due: ``every_minutes`` since the last save, or ``every_learner_steps`` since the last
    saved (or restored) learner step, whichever comes first. The one place this rule is written."""

    def __init__(self, config: CheckpointingConfig):
        self._config = config
        self._last_time = time.monotonic()
        self._last_steps = 0

    def due(self, learner_steps: int) -> bool:
        config = self._config
        if config.every_minutes is not None and time.monotonic() - self._last_time >= 60 * config.every_minutes:
            return True
        every = config.every_learner_steps
        return every is not None and int(learner_steps) - self._last_steps >= every

    def saved(self, learner_steps: int) -> None:
        """A checkpoint at ``learner_steps`` was just written."""
        self._last_time = time.monotonic()
        self._last_steps = int(learner_steps)

    def restored(self, learner_steps: int) -> None:
        """The run resumed from a checkpoint at ``learner_steps``: the step interval counts from there."""
        self._last_steps = int(learner_steps)


@dataclasses.dataclass(frozen=True)
class Restored:
    """The newest readable checkpoint of an experiment."""

    path: str
    learner_state: Any
    actor_state: Any  # the in-process actor's own state (step count, key), or None
    learner_steps: int
    counts: dict
    loop: dict  # the in-process loop's progress: actor_steps, next_eval, evaluations, wall_seconds, resumes
    replay_items: dict  # table name -> number of items when saved
    metadata: dict
    replay_state: Any = None  # local replay tables' items, when they were checkpointed

    @property
    def replay_backend(self) -> str | None:
        """ "local" or "reverb": the backend whose tables were checkpointed (None if replay was not)."""
        if self.replay_state is not None:
            return "local"
        return "reverb" if self.replay_path is not None else None

    @property
    def replay_path(self) -> str | None:
        """The reverb checkpoint saved with this state, if replay was checkpointed."""
        path = os.path.join(self.path, REPLAY)
        return path if os.path.isdir(path) else None

    def describe(self) -> str:
        """One line for the terminal: what is being resumed."""
        actor_steps = self.loop.get("actor_steps", self.counts.get("actor_steps", 0))
        after = self.metadata.get("replay_items_after") or self.replay_items
        items = (
            ", ".join(
                f"{name} {size}" if after.get(name, size) == size else f"{name} {size}-{after[name]}"
                for name, size in sorted(self.replay_items.items())
            )
            or "not checkpointed"
        )
        return (
            f"Resuming from checkpoint {self.path}: actor steps {int(actor_steps)}, learner steps "
            f"{self.learner_steps}, replay items: {items}."
        )


def experiment_identity(config: Any) -> dict:
    """What must match for a checkpoint to be restored into ``config``'s experiment."""
    builder = type(config.builder)
    return {"builder": f"{builder.__module__}.{builder.__qualname__}", "environment": config.environment_id}


class ExperimentCheckpointer:
    """Saves and restores an experiment's checkpoints in ``config.directory``.

    The directory must be new, empty, or one that earlier runs of the same
    experiment wrote: a directory holding anything else is refused, so a
    mistyped path never mixes runs. Restoring a checkpoint of another agent,
    environment or network shape raises ``CheckpointMismatchError``; if every
    checkpoint is unreadable it raises ``CheckpointError`` rather than starting
    afresh over them.
    """

    def __init__(self, config: CheckpointingConfig, identity: Mapping[str, Any], exclusive: bool = True):
        if not isinstance(config, CheckpointingConfig):
            raise TypeError(f"config must be a CheckpointingConfig, got {type(config).__name__}.")
        self._config = config
        self._identity = dict(identity)
        directory = ensure_writable_dir(config.directory, "experiment checkpoint directory")
        foreign = sorted(e for e in os.listdir(directory) if not _OWN_ENTRY.match(e))
        if foreign:
            raise CheckpointError(
                f"{config.directory} is not an experiment checkpoint directory: it holds {foreign[:5]}. Give a new or "
                "empty directory, or the checkpoint directory of an earlier run of this experiment."
            )
        self._checkpointer = Checkpointer(
            config.directory, keep=config.keep, label="experiment checkpoint", exclusive=exclusive
        )
        self.clock = CheckpointClock(config)

    @property
    def config(self) -> CheckpointingConfig:
        return self._config

    def close(self) -> None:
        """Lets go of the directory, so that a later run may write there (see ``Checkpointer.close``)."""
        self._checkpointer.close()

    @property
    def directory(self) -> str:
        return self._checkpointer.directory

    @property
    def staging_directory(self) -> str:
        """The root the replay server writes its checkpoints to (see the module docstring)."""
        return os.path.join(self.directory, STAGING)

    def restore(self) -> Restored | None:
        """The newest readable checkpoint, or None in a directory without checkpoints."""
        found = self._checkpointer.restore_latest(expect_metadata={"identity": self._identity})
        if found is None:
            return None
        state, step, metadata = found
        self.clock.restored(step)
        return Restored(
            path=self._checkpointer.path(step),
            learner_state=state["learner"],
            actor_state=state.get("actor"),
            learner_steps=int(metadata.get("learner_steps", step)),
            counts=dict(metadata.get("counts", {})),
            loop=dict(metadata.get("loop", {})),
            replay_items=dict(metadata.get("replay_items", {})),
            metadata=metadata,
            replay_state=state.get("replay"),
        )

    def check_learner_state(self, restored: Restored, fresh_state: Any) -> None:
        """Raises ``CheckpointMismatchError`` unless ``restored``'s learner state fits ``fresh_state``'s shapes."""
        if not signatures_match(restored.metadata.get("learner_signature"), tree_signature(fresh_state)):
            raise CheckpointMismatchError(
                f"{restored.path} holds a learner state of other shapes than this experiment's learner (another "
                "network size, observation or action shape?). Restore it with the configuration it was written "
                "with, or give a new checkpoint directory."
            )

    def prepare_replay(self, restored: Restored | None) -> tuple[str, str | None]:
        """Empties the staging directory and returns ``(staging root, checkpoint to load or None)``.

        A replay checkpoint left in the staging directory by a process killed
        before its experiment checkpoint was complete belongs to no checkpoint
        and is removed, so the server loads the one saved with ``restored``.
        """
        shutil.rmtree(self.staging_directory, ignore_errors=True)
        os.makedirs(self.staging_directory)
        fallback = restored.replay_path if restored is not None and self._config.replay else None
        return self.staging_directory, fallback

    def check_replay(self, restored: Restored, replay_client: Any) -> None:
        """Raises ``CheckpointError`` if the restored tables differ in size from the checkpoint's."""
        if not self._config.replay or restored.replay_backend is None:
            return
        sizes = _table_sizes(replay_client)
        low = restored.replay_items
        high = restored.metadata.get("replay_items_after") or low
        wrong = {
            name: int(sizes.get(name, -1))
            for name in low
            if not low[name] <= sizes.get(name, -1) <= high.get(name, low[name])
        }
        if wrong:
            raise CheckpointError(
                f"The replay restored {wrong} items from {restored.path}, but the checkpoint recorded {dict(low)}. "
                "The replay checkpoint is unreadable by this version or damaged."
            )

    def check_replay_backend(self, restored: Restored, backend: str) -> None:
        """Raises ``CheckpointMismatchError`` if ``restored``'s replay was saved by another backend than ``backend``."""
        if self._config.replay and restored.replay_backend not in (None, backend):
            raise CheckpointMismatchError(
                f"{restored.path} holds replay tables saved by the {restored.replay_backend!r} backend, but this "
                f"run uses {backend!r}; resume with --replay {restored.replay_backend} "
                f"(replay={restored.replay_backend!r})."
            )

    def save(
        self,
        learner_state: Any,
        learner_steps: int,
        counts: Mapping[str, Any],
        loop: Mapping[str, Any] | None = None,
        replay_client: Any = None,
        actor_state: Any = None,
    ) -> str:
        """Writes one checkpoint; with ``replay_client`` (and ``replay=True``) the replay tables go with it.

        A ``LocalReplay``'s tables are saved in the checkpoint's tree; a reverb
        server writes its own checkpoint, which is attached.

        Returns the checkpoint's path. The previous checkpoints stay until this one is complete.
        """
        attach, replay_items, replay_items_after = {}, {}, {}
        tree = {"learner": learner_state}
        if self._config.replay and isinstance(replay_client, LocalTablesClient):
            replay_items = _table_sizes(replay_client)
            tree["replay"] = replay_client.save()
        elif self._config.replay and replay_client is not None:
            replay_items = _table_sizes(replay_client)
            replay_path = replay_client.checkpoint()
            # In a distributed run actors insert while the checkpoint is taken: it holds between these sizes.
            replay_items_after = _table_sizes(replay_client)
            if os.path.dirname(os.path.abspath(replay_path)) != self.staging_directory:
                raise CheckpointError(
                    f"The replay server wrote its checkpoint to {replay_path}, not under {self.staging_directory}: "
                    "build the server with the checkpointer from prepare_replay()."
                )
            attach[REPLAY] = replay_path
        metadata = {
            "identity": self._identity,
            "learner_signature": tree_signature(learner_state),
            "learner_steps": int(learner_steps),
            "counts": dict(counts),
            "loop": dict(loop or {}),
            "replay_items": replay_items,
            "replay_items_after": replay_items_after if attach else {},
            "saved_at": time.time(),
        }
        if actor_state is not None:
            tree["actor"] = actor_state
        path = self._checkpointer.save(tree, int(learner_steps), metadata, attach=attach)
        self.clock.saved(learner_steps)
        return path


class Resume:
    """Resuming a built experiment from its newest checkpoint, in one place for every runner.

    ``open_resume`` finds the checkpoint before the experiment is built (what the replay and counter must be
    built with: ``replay_state``, ``reverb_paths``, ``counts``); once it is built, ``restore`` puts the
    checkpoint's learner state, counts, replay tables and actor state into whichever of them this process holds,
    checking each. Without a checkpoint (a new directory) every step does nothing.
    """

    def __init__(self, checkpointer: ExperimentCheckpointer | None, restored: Restored | None = None):
        self.checkpointer = checkpointer  # None: the experiment is not checkpointed
        self.restored = restored

    def close(self) -> None:
        """Lets go of the checkpoint directory once the run is over (nothing without checkpointing)."""
        if self.checkpointer is not None:
            self.checkpointer.close()

    @property
    def counts(self) -> dict:
        """The counts to start from: the checkpoint's, with its exact learner step (the learner adds its steps
        to the counter once a second); empty without a checkpoint."""
        if self.restored is None:
            return {}
        return {**self.restored.counts, "learner_steps": self.restored.learner_steps}

    @property
    def loop(self) -> dict:
        """The in-process loop's progress when it was saved (empty without a checkpoint)."""
        return dict(self.restored.loop) if self.restored is not None else {}

    @property
    def replay_state(self) -> Any:
        """The local tables' items to build a replay with, when they were checkpointed; else None."""
        if self.restored is None or not self.checkpointer.config.replay:
            return None
        return self.restored.replay_state

    @property
    def resumes(self) -> int:
        """How many times this run was resumed before: 0 for a run that starts afresh."""
        return int(self.loop.get("resumes", -1)) + 1 if self.restored is not None else 0

    def reverb_paths(self) -> tuple[str, str | None] | None:
        """``(staging root, checkpoint to load or None)`` for a reverb server whose tables are checkpointed
        (``ExperimentCheckpointer.prepare_replay``); None when replay is not checkpointed."""
        if self.checkpointer is None or not self.checkpointer.config.replay:
            return None
        return self.checkpointer.prepare_replay(self.restored)

    def restore(
        self,
        learner: Any = None,
        counter: Any = None,
        replay: Any = None,
        actor: Any = None,
        *,
        load_replay: bool = True,
        check_replay: bool = True,
    ) -> bool:
        """Puts the checkpoint into the built pieces given; returns whether there was one.

        The learner's state is checked against its shapes first. ``replay`` is the client of the tables: local
        tables get the checkpoint's items unless ``load_replay`` is false (a replay node loaded them when it
        was built, or holds items added since); with ``check_replay`` their sizes are checked against the
        checkpoint's (a reverb server loaded its own). The actor continues from its saved step counts and keys.
        """
        restored = self.restored
        if restored is None:
            return False
        if learner is not None:
            self.checkpointer.check_learner_state(restored, learner.save())
            learner.restore(restored.learner_state)
        if counter is not None:
            counter.restore(self.counts)
        if replay is not None:
            if load_replay and self.replay_state is not None:
                replay.restore(self.replay_state)
            if check_replay:
                self.checkpointer.check_replay(restored, replay)
        if actor is not None and restored.actor_state is not None:
            actor.restore(restored.actor_state)
        return True


def open_resume(config: Any, replay_backend: str | None = None, exclusive: bool = True) -> Resume:
    """The newest checkpoint of ``config``'s experiment (an ``ExperimentConfig`` with ``checkpointing``), checked
    against the replay backend this run uses when it is given (``"local"`` for any tables of ``LocalReplay``, or
    ``"reverb"``); a ``Resume`` of nothing without checkpointing.

    The run that opens it ``exclusive`` holds the directory until ``Resume.close`` (or its process ends): another
    run on the same directory is refused with ``DirectoryInUseError``. Nodes of a distributed program, whose driver
    holds the directory, open it with ``exclusive=False``."""
    if config.checkpointing is None:
        return Resume(None)
    checkpointer = ExperimentCheckpointer(config.checkpointing, experiment_identity(config), exclusive=exclusive)
    try:
        restored = checkpointer.restore()
        if restored is not None and replay_backend is not None:
            checkpointer.check_replay_backend(restored, replay_backend)
    except BaseException:
        checkpointer.close()
        raise
    return Resume(checkpointer, restored)


def newest_checkpoint_counts(directory: str) -> dict | None:
    """The counts of the newest checkpoint in ``directory`` (its learner steps included), read from its manifest
    without loading the state; None where there is none or it cannot be read."""
    from acme.utils.checkpoint_files import read_manifest

    try:
        checkpoints = Checkpointer(directory, exclusive=False)
        step = checkpoints.latest_step()
        if step is None:
            return None
        metadata = read_manifest(checkpoints.path(step)).get("metadata", {})
        return {**metadata.get("counts", {}), "learner_steps": int(metadata.get("learner_steps", step))}
    except (OSError, CheckpointError, ValueError, TypeError, AttributeError):
        return None


def _table_sizes(replay_client: Any) -> dict:
    return {name: int(info.current_size) for name, info in replay_client.server_info().items()}


def learner_steps_of(learner: Any) -> int:
    """The learner's own step count (``num_steps``, else its state's ``steps``)."""
    steps = getattr(learner, "num_steps", None)
    if steps is None:
        steps = learner.save().steps
    return int(steps)


def reverb_checkpointer(staging: str, fallback: str | None) -> Any:
    """A reverb checkpointer writing under ``staging`` that first loads ``fallback`` (a checkpoint path)."""
    import reverb  # only the replay side needs it

    return reverb.checkpointers.DefaultCheckpointer(path=staging, fallback_checkpoint_path=fallback)
