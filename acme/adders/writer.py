"""The machinery of the adders that write through a trajectory writer: reverb's, or ``LocalReplay``'s.

Every such adder appends each environment step to the client's
``TrajectoryWriter`` once (plus a few rows at an episode's end: the final
step, padding, or the last n-step sums) and builds its items out of references
into the writer's history, so data shared by several items is sent to the
server once.
"""

from __future__ import annotations

import abc
import math
from typing import Mapping

import dm_env
import numpy as np
import tree

from acme import types
from acme.adders.base import Adder, PriorityFn, PriorityFns, Step, check_positive_int, check_priority_fns


class ReverbAdder(Adder):
    """Base of the adders that write to Reverb tables through a TrajectoryWriter.

    Subclasses implement ``_on_first``, ``_on_step`` and ``_on_last`` and call
    ``_create_item`` with a nest of ``TrajectoryColumn`` references into
    ``self._writer.history``. This class checks the call order, owns the writer
    (created lazily on the first ``add_first``), computes priorities and bounds
    the number of items in flight. Each reward and discount leaf keeps the
    dtype of its first value; a Python number (``dm_env.termination``'s
    discount) takes the dtype the table's signature declares for it, float32
    where the table has none.

    Args:
      client: a ``reverb.Client`` connected to the replay server, or a ``LocalReplay``.
      priority_fns: replay table name -> priority function. Each item is
        written to every table listed; a function receives the item as numpy
        arrays (same structure as the item) and returns its priority, None
        means priority 1.0.
      max_in_flight_items: how many created items may be waiting for the
        server's confirmation before the adder blocks (back-pressure from the
        tables' rate limiters lands here).
      num_keep_alive_refs: how many steps back items may reference.
      validate_items: let the writer check items against the table signatures.
    """

    def __init__(
        self,
        client,
        priority_fns: PriorityFns,
        max_in_flight_items: int,
        num_keep_alive_refs: int,
        validate_items: bool = True,
    ):
        if client is None:
            raise ValueError(
                "client must be a reverb.Client connected to the replay server or a LocalReplay, got None."
            )
        self._client = client
        self._priority_fns = check_priority_fns(priority_fns)
        self._max_in_flight_items = check_positive_int("max_in_flight_items", max_in_flight_items)
        self._num_keep_alive_refs = check_positive_int("num_keep_alive_refs", num_keep_alive_refs)
        self._validate_items = bool(validate_items)
        self._writer = None
        self._episode_active = False
        self._reward_dtypes = _DtypeLock()
        self._discount_dtypes = _DtypeLock()

    # ------------------------------------------------------------------ public

    @property
    def priority_fns(self) -> Mapping[str, PriorityFn | None]:
        return dict(self._priority_fns)

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        if not isinstance(timestep, dm_env.TimeStep):
            raise ValueError(f"add_first expects a dm_env.TimeStep, got {type(timestep).__name__}.")
        if not timestep.first():
            raise ValueError(
                "add_first expects the first timestep of an episode "
                f"(step_type FIRST), got step_type {timestep.step_type!r}. "
                "Use add() for the following timesteps."
            )
        if self._episode_active:
            raise RuntimeError(
                "add_first() was called while an episode is still being recorded "
                "(its last timestep was never added). Call reset() to abandon the "
                "unfinished episode before starting a new one."
            )
        if self._writer is None:
            self._writer = self._make_writer()
        self._episode_active = True
        self._on_first(timestep)

    def add(
        self,
        action: types.NestedArray,
        next_timestep: dm_env.TimeStep,
        extras: types.NestedArray = (),
    ) -> None:
        if not self._episode_active:
            raise RuntimeError(
                "add() was called with no episode in progress: call add_first() with "
                "the episode's first timestep before add() (also after the previous "
                "episode's last timestep or after reset())."
            )
        if not isinstance(next_timestep, dm_env.TimeStep):
            raise ValueError(f"add expects a dm_env.TimeStep, got {type(next_timestep).__name__}.")
        if next_timestep.first():
            raise ValueError(
                "add() received a FIRST timestep; a new episode must be started "
                "with add_first() (call reset() first to drop the unfinished one)."
            )
        next_timestep = next_timestep._replace(
            reward=self._reward_dtypes.cast(next_timestep.reward, "reward"),
            discount=self._discount_dtypes.cast(next_timestep.discount, "discount"),
        )
        self._on_step(action, next_timestep, extras)
        if next_timestep.last():
            self._on_last()
            self._writer.end_episode(clear_buffers=self._clear_buffers_at_episode_end())
            self._episode_active = False

    def reset(self, timeout_ms: int | None = None) -> None:
        """Drops the unfinished episode; items already created are still sent."""
        if self._writer is not None:
            self._writer.end_episode(clear_buffers=True, timeout_ms=timeout_ms)
        self._episode_active = False
        self._reset_state()

    def flush(self, timeout_ms: int | None = None) -> None:
        """Blocks until every item created so far has been confirmed by the server."""
        if self._writer is not None:
            self._writer.flush(0, timeout_ms=timeout_ms)

    def abort(self) -> None:
        """Closes the writer at once, dropping unconfirmed items.

        Safe to call from another thread: a call blocked by the table's rate
        limiter (e.g. once the learner has stopped sampling) returns with an error.
        """
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        self._episode_active = False

    def close(self) -> None:
        """Flushes the created items and releases the writer."""
        if self._writer is not None:
            self._writer.flush()
            self._writer.close()
            self._writer = None
        self._episode_active = False
        self._reset_state()

    # ------------------------------------------------------------- subclasses

    @abc.abstractmethod
    def _on_first(self, timestep: dm_env.TimeStep) -> None:
        """Handles the first timestep of an episode."""

    @abc.abstractmethod
    def _on_step(self, action, next_timestep: dm_env.TimeStep, extras) -> None:
        """Handles one environment step (including the last one)."""

    @abc.abstractmethod
    def _on_last(self) -> None:
        """Writes whatever remains after the last timestep, before the episode ends."""

    @abc.abstractmethod
    def _reset_state(self) -> None:
        """Forgets the per-episode bookkeeping."""

    def _clear_buffers_at_episode_end(self) -> bool:
        return True

    # ---------------------------------------------------------------- helpers

    def _make_writer(self):
        infos = self._client.server_info()
        available = sorted(infos.keys())
        unknown = [table for table in self._priority_fns if table not in available]
        if unknown:
            raise ValueError(
                f"priority_fns names table(s) {unknown} that the replay server does not "
                f"have; its tables are {available}."
            )
        signature = next(
            (s for s in (_table_signature(self._client, infos, t) for t in self._priority_fns) if s is not None), None
        )
        self._reward_dtypes.declare(getattr(signature, "reward", None))
        self._discount_dtypes.declare(getattr(signature, "discount", None))
        return self._client.trajectory_writer(
            num_keep_alive_refs=self._num_keep_alive_refs,
            validate_items=self._validate_items,
        )

    def _priorities(self, trajectory) -> dict[str, float]:
        if all(fn is None for fn in self._priority_fns.values()):
            return {table: 1.0 for table in self._priority_fns}
        as_numpy = tree.map_structure(lambda column: column.numpy(), trajectory)
        priorities = {}
        for table, fn in self._priority_fns.items():
            if fn is None:
                priorities[table] = 1.0
                continue
            value = fn(as_numpy)
            try:
                priority = float(np.asarray(value))
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"The priority function of table {table!r} must return a single number, got {value!r}."
                ) from e
            if not math.isfinite(priority) or priority < 0:
                raise ValueError(
                    f"The priority function of table {table!r} returned {priority}; priorities must be finite and >= 0."
                )
            priorities[table] = priority
        return priorities

    def _create_item(self, trajectory) -> None:
        """Writes ``trajectory`` (a nest of TrajectoryColumns) to every table."""
        for table, priority in self._priorities(trajectory).items():
            self._writer.create_item(table=table, priority=priority, trajectory=trajectory)
        self._writer.flush(self._max_in_flight_items)


def _table_signature(client, infos, table: str):
    """The signature ``table`` declares (reverb's ``TableInfo.signature`` or the local table's spec), or None."""
    info = infos[table]
    if hasattr(info, "signature"):  # reverb
        return info.signature
    table_of = getattr(client, "table", None)  # LocalReplay
    return table_of(table).spec.signature if table_of is not None else None


class _DtypeLock:
    """Casts each leaf of a nest to the dtype that leaf had the first time.

    Reverb columns need one dtype; environments often mix numpy scalars with
    Python floats (``dm_env.termination`` uses a Python 0.0 discount). A Python
    number seen first takes the dtype that the table's signature declares for
    that leaf (``declare``; e.g. float64 for an environment built with
    ``single_precision=False``), or float32 where no signature says.
    """

    def __init__(self):
        self._dtypes = None
        self._declared = None

    def declare(self, specs_nest) -> None:
        """The nest of specs (anything with ``.dtype``; None: unknown) the values are written against."""
        self._declared = specs_nest

    def cast(self, nest, what: str):
        if nest is None:
            raise ValueError(
                f"add() got a timestep whose {what} is None; only the first timestep "
                "of an episode (passed to add_first) may leave it unset."
            )
        if self._dtypes is None:
            self._dtypes = self._lock(nest)
        if isinstance(self._dtypes, np.dtype) and not tree.is_nested(nest):
            return np.asarray(nest, dtype=self._dtypes)  # fast path: a single array
        try:
            return tree.map_structure(lambda x, dtype: np.asarray(x, dtype=dtype), nest, self._dtypes)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"The timestep's {what} changed structure: first seen as {self._dtypes!r}, now {nest!r}."
            ) from e

    def _lock(self, nest):
        """Each leaf's dtype: its own, or for a Python number the declared one (float32 if none)."""
        declared = tree.map_structure(lambda _: None, nest)
        if self._declared is not None:
            try:
                tree.assert_same_structure(nest, self._declared, check_types=False)
                declared = tree.unflatten_as(nest, [_spec_dtype(s) for s in tree.flatten(self._declared)])
            except (ValueError, TypeError):
                pass  # a signature of another layout: the table reports any mismatch itself
        return tree.map_structure(_leaf_dtype, nest, declared)


def _spec_dtype(spec) -> np.dtype | None:
    """The numpy dtype of a spec (dm_env, ``LeafSpec`` or ``tf.TensorSpec``), or None."""
    dtype = getattr(spec, "dtype", None)
    return None if dtype is None else np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def _leaf_dtype(x, declared: np.dtype | None) -> np.dtype:
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return declared if declared is not None else np.dtype(np.float32)
    return np.asarray(x).dtype


def zeros_like(nest: types.NestedArray) -> types.NestedArray:
    """Zero arrays with the shapes and dtypes of a nest of arrays."""
    return tree.map_structure(lambda x: np.zeros_like(np.asarray(x)), nest)


class StepwiseReverbAdder(ReverbAdder):
    """Base of the adders whose items are runs of consecutive ``Step``\\ s.

    Writes one ``Step`` row per environment step: row ``k`` (``o_k``, ``a_k``,
    ``r_{k+1}``, ``d_{k+1}``, ``start_of_episode``, extras of ``a_k``) is
    appended by the ``add`` that reports ``a_k``, and the episode's last
    timestep adds a final row with its observation and zero action, reward,
    discount and extras. ``self._rows`` counts the rows appended since the
    writer's history was last cleared; ``_after_append`` is called after each
    row.
    """

    def _reset_state(self) -> None:
        self._rows = 0
        self._episode_rows = 0
        self._pending_observation = None
        self._pending_start = False
        self._final_step: Step | None = None

    def _on_first(self, timestep: dm_env.TimeStep) -> None:
        if self._clear_buffers_at_episode_end():
            self._rows = 0
        self._episode_rows = 0
        self._pending_observation = timestep.observation
        self._pending_start = True
        self._final_step = None

    def _before_append(self, next_timestep: dm_env.TimeStep) -> None:
        """Hook called before the rows of one ``add`` are appended."""

    def _after_append(self, is_final: bool) -> None:
        """Hook called after each row (``is_final``: the episode's final step)."""

    def _on_step(self, action, next_timestep: dm_env.TimeStep, extras) -> None:
        if next_timestep.reward is None or next_timestep.discount is None:
            raise ValueError(
                "add() got a timestep with reward or discount None; only the first "
                "timestep of an episode (passed to add_first) may have them unset."
            )
        self._before_append(next_timestep)
        step = Step(
            observation=self._pending_observation,
            action=action,
            reward=next_timestep.reward,
            discount=next_timestep.discount,
            start_of_episode=np.array(self._pending_start, dtype=bool),
            extras=extras,
        )
        self._append_row(step, is_final=False)
        self._pending_observation = next_timestep.observation
        self._pending_start = False
        if next_timestep.last():
            final = Step(
                observation=next_timestep.observation,
                action=zeros_like(action),
                reward=zeros_like(next_timestep.reward),
                discount=zeros_like(next_timestep.discount),
                start_of_episode=np.array(False, dtype=bool),
                extras=zeros_like(extras),
            )
            self._final_step = final
            self._append_row(final, is_final=True)

    def _append_row(self, step: Step, is_final: bool, notify: bool = True) -> None:
        self._writer.append(step)
        self._rows += 1
        self._episode_rows += 1
        if notify:
            self._after_append(is_final)

    def _window(self, start: int, length: int) -> Step:
        """TrajectoryColumns of rows ``start .. start + length - 1`` (row numbers as in ``self._rows``)."""
        first = start - self._rows
        stop = first + length
        if first >= 0 or stop > 0 or first < -self._num_keep_alive_refs:
            raise RuntimeError(
                f"Internal error: rows [{start}, {start + length}) are not in the "
                f"writer's history ({self._rows} rows, keeping {self._num_keep_alive_refs})."
            )
        index = slice(first, stop if stop < 0 else None)
        return tree.map_structure(lambda column: column[index], self._writer.history)
