"""The adder interface and the machinery shared by the Reverb-backed adders.

An *adder* sits between an actor and a replay buffer. The actor reports what
happened in the environment (``add_first`` at the start of an episode, then
``add`` once per environment step) and the adder turns that stream of
timesteps into replay items: n-step transitions, fixed-length sequences or
whole episodes.

Every Reverb adder appends each environment step to a Reverb
``TrajectoryWriter`` once (plus a few rows at an episode's end: the final
step, padding, or the last n-step sums) and builds its items out of references
into the writer's history, so data shared by several items is sent to the
server once.
"""

from __future__ import annotations

import abc
import math
from typing import Any, Callable, Mapping, NamedTuple, Optional

import dm_env
import numpy as np
import tree

from acme import types
from acme.replay.tables import LeafSpec

# A priority function receives the item it is asked about, as numpy arrays in
# the item's own structure (a ``Transition`` or a ``Step`` with a time
# dimension), and returns the item's priority in that table.
PriorityFn = Callable[[Any], float]
PriorityFns = Mapping[str, Optional[PriorityFn]]


class Step(NamedTuple):
    """One environment step, as stored by the sequence and episode adders.

    Step ``t`` of an episode holds the observation ``o_t``, the action ``a_t``
    the agent took there, the reward ``r_{t+1}`` and environment discount
    ``d_{t+1}`` of the timestep that action led to, ``start_of_episode``
    (true only for ``t == 0``) and the agent's ``extras`` for ``a_t`` (e.g.
    policy logits or a recurrent state).

    The final timestep of an episode becomes a step of its own: its
    observation, with zero action, reward, discount and extras. Padding steps
    are all zeros (``start_of_episode`` false).
    """

    observation: types.NestedArray
    action: types.NestedArray
    reward: types.NestedArray
    discount: types.NestedArray
    start_of_episode: types.NestedArray
    extras: types.NestedArray = ()


class Adder(abc.ABC):
    """Receives an actor's experience, one timestep at a time.

    The calls for one episode are ``add_first(first_timestep)`` followed by one
    ``add(action, next_timestep, extras)`` per environment step; the episode
    ends with the ``add`` whose ``next_timestep.last()`` is true. ``reset``
    abandons an unfinished episode.
    """

    @abc.abstractmethod
    def add_first(self, timestep: dm_env.TimeStep) -> None:
        """Records the first timestep of an episode (``timestep.first()``)."""

    @abc.abstractmethod
    def add(
        self,
        action: types.NestedArray,
        next_timestep: dm_env.TimeStep,
        extras: types.NestedArray = (),
    ) -> None:
        """Records the action taken and the timestep it led to.

        ``extras`` is a nest of arrays produced with the action (for example
        the policy's logits); it must keep the same structure within a replay
        table.
        """

    @abc.abstractmethod
    def reset(self) -> None:
        """Drops any state of a partially recorded episode."""


def check_positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Returns ``value`` as an int, or raises a ValueError naming the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(
            f"{name} must be an integer >= {minimum}, got {value!r} "
            f"(of type {type(value).__name__})."
        )
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}.")
    return int(value)


def check_priority_fns(priority_fns: Any) -> dict[str, Optional[PriorityFn]]:
    """Validates a table-name -> priority function mapping and copies it."""
    if not isinstance(priority_fns, Mapping):
        raise ValueError(
            "priority_fns must be a mapping from replay table name to a priority "
            "function (or None for priority 1.0), e.g. {'replay': None}; "
            f"got {priority_fns!r}."
        )
    if not priority_fns:
        raise ValueError(
            "priority_fns is empty, so the adder would write to no table. Pass at "
            "least one table name, e.g. {'replay': None}."
        )
    checked = {}
    for table, fn in priority_fns.items():
        if not isinstance(table, str) or not table:
            raise ValueError(
                f"priority_fns keys must be non-empty table names (str), got {table!r}."
            )
        if fn is not None and not callable(fn):
            raise ValueError(
                f"priority_fns[{table!r}] must be a callable taking the item as numpy "
                f"arrays and returning a float, or None for priority 1.0; got {fn!r}."
            )
        checked[table] = fn
    return checked


def leaf_spec(spec: Any, leading_dims: tuple = ()) -> LeafSpec:
    """The backend-free ``LeafSpec`` of anything with a shape and dtype (dm_env spec, array), after ``leading_dims``."""
    if not (hasattr(spec, "shape") and hasattr(spec, "dtype")):
        raise ValueError(
            f"Expected a spec or array with .shape and .dtype (e.g. a dm_env.specs.Array), got {spec!r}."
        )
    return LeafSpec(tuple(leading_dims) + tuple(spec.shape), np.dtype(spec.dtype))


def nested_leaf_spec(nest: Any, leading_dims: tuple = ()) -> Any:
    """A nest of specs (or arrays) as a nest of ``LeafSpec`` with ``leading_dims`` in front (a table signature)."""
    return tree.map_structure(lambda s: leaf_spec(s, leading_dims), nest)


class ReverbAdder(Adder):
    """Base of the adders that write to Reverb tables through a TrajectoryWriter.

    Subclasses implement ``_on_first``, ``_on_step`` and ``_on_last`` and call
    ``_create_item`` with a nest of ``TrajectoryColumn`` references into
    ``self._writer.history``. This class checks the call order, owns the writer
    (created lazily on the first ``add_first``), computes priorities and bounds
    the number of items in flight.

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
            raise ValueError("client must be a reverb.Client connected to the replay server or a LocalReplay, got None.")
        self._client = client
        self._priority_fns = check_priority_fns(priority_fns)
        self._max_in_flight_items = check_positive_int(
            "max_in_flight_items", max_in_flight_items
        )
        self._num_keep_alive_refs = check_positive_int("num_keep_alive_refs", num_keep_alive_refs)
        self._validate_items = bool(validate_items)
        self._writer = None
        self._episode_active = False
        self._reward_dtypes = _DtypeLock()
        self._discount_dtypes = _DtypeLock()

    # ------------------------------------------------------------------ public

    @property
    def priority_fns(self) -> Mapping[str, Optional[PriorityFn]]:
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

    def reset(self, timeout_ms: Optional[int] = None) -> None:
        """Drops the unfinished episode; items already created are still sent."""
        if self._writer is not None:
            self._writer.end_episode(clear_buffers=True, timeout_ms=timeout_ms)
        self._episode_active = False
        self._reset_state()

    def flush(self, timeout_ms: Optional[int] = None) -> None:
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
        available = sorted(self._client.server_info().keys())
        unknown = [table for table in self._priority_fns if table not in available]
        if unknown:
            raise ValueError(
                f"priority_fns names table(s) {unknown} that the replay server does not "
                f"have; its tables are {available}."
            )
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
                    f"The priority function of table {table!r} must return a single "
                    f"number, got {value!r}."
                ) from e
            if not math.isfinite(priority) or priority < 0:
                raise ValueError(
                    f"The priority function of table {table!r} returned {priority}; "
                    "priorities must be finite and >= 0."
                )
            priorities[table] = priority
        return priorities

    def _create_item(self, trajectory) -> None:
        """Writes ``trajectory`` (a nest of TrajectoryColumns) to every table."""
        for table, priority in self._priorities(trajectory).items():
            self._writer.create_item(table=table, priority=priority, trajectory=trajectory)
        self._writer.flush(self._max_in_flight_items)


class _DtypeLock:
    """Casts each leaf of a nest to the dtype that leaf had the first time.

    Reverb columns need one dtype; environments often mix numpy scalars with
    Python floats (``dm_env.termination`` uses a Python 0.0 discount). A Python
    number seen first counts as float32.
    """

    def __init__(self):
        self._dtypes = None

    def cast(self, nest, what: str):
        if nest is None:
            raise ValueError(
                f"add() got a timestep whose {what} is None; only the first timestep "
                "of an episode (passed to add_first) may leave it unset."
            )
        if self._dtypes is None:
            self._dtypes = tree.map_structure(_leaf_dtype, nest)
        if isinstance(self._dtypes, np.dtype) and not tree.is_nested(nest):
            return np.asarray(nest, dtype=self._dtypes)  # fast path: a single array
        try:
            return tree.map_structure(
                lambda x, dtype: np.asarray(x, dtype=dtype), nest, self._dtypes
            )
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"The timestep's {what} changed structure: first seen as "
                f"{self._dtypes!r}, now {nest!r}."
            ) from e


def _leaf_dtype(x) -> np.dtype:
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return np.dtype(np.float32)
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
        self._final_step: Optional[Step] = None

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
