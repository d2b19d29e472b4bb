"""The local backend's client: the part of ``reverb.Client`` the library uses, over ``LocalTable``\\ s.

``LocalReplay`` holds the tables of one experiment in this process. Adders
write to it through ``trajectory_writer()``, a writer with the meaning of
reverb's ``TrajectoryWriter`` (rows appended once, items made of references
into the history), so every adder produces the same items on both backends.
Learners sample ``[B]`` or ``[U, B]`` batches and update priorities; the
experiment checkpoint saves the tables with ``save``/``restore``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import jax
import numpy as np
import tree

from acme import core
from acme.replay import tables
from acme.replay.local import LocalTable, ReplaySample, fits


@dataclasses.dataclass(frozen=True)
class TableInfo:
    """What ``server_info()`` says of a table (the fields of reverb's ``TableInfo`` the library reads)."""

    name: str
    current_size: int
    max_size: int
    num_inserts: int
    num_samples: int
    num_deletes: int


class LocalTablesClient:
    """A replay client over ``LocalTable``\\ s, in this process (``LocalReplay``) or in a replay node
    (``acme.replay.direct.RemoteTables``): its tables are sampled by ``LocalBatches`` (``table(name).sample`` and
    ``can_sample``), and a checkpoint holds them as ``save()``'s state."""

    def close(self) -> None:
        """Releases what the client holds: nothing for tables in this process, a connection for a node's."""


class LocalReplay(LocalTablesClient):
    """The replay tables of one experiment, in this process.

    Args:
      table_specs: the builder's ``TableSpec``\\ s.
      seed: seeds each table's sampling (table ``i`` uses ``seed + i``).
      wait_on_insert: whether inserts wait for a rate limiter that asks for
        samples first. A run whose actor and learner take turns in one thread
        sets it False (the learner then catches up after each actor step);
        threads that act and learn concurrently keep it True.
    """

    def __init__(self, table_specs: Sequence[tables.TableSpec], seed: int = 0, wait_on_insert: bool = True):
        table_specs = list(table_specs)
        if not table_specs or not all(isinstance(s, tables.TableSpec) for s in table_specs):
            raise ValueError(f"table_specs must be a non-empty list of TableSpec, got {table_specs!r}.")
        names = [s.name for s in table_specs]
        if len(set(names)) != len(names):
            raise ValueError(f"Table names must be unique, got {names}.")
        self._tables = {s.name: LocalTable(s, seed=seed + i) for i, s in enumerate(table_specs)}
        self._wait_on_insert = bool(wait_on_insert)

    @property
    def wait_on_insert(self) -> bool:
        """Whether inserts wait for a rate limiter that asks for samples first."""
        return self._wait_on_insert

    def table(self, name: str) -> LocalTable:
        """The table called ``name``."""
        try:
            return self._tables[name]
        except KeyError:
            raise KeyError(f"No replay table {name!r}; the tables are {sorted(self._tables)}.") from None

    def server_info(self) -> dict[str, TableInfo]:
        """Each table's size and counters, by name."""
        return {name: TableInfo(name=name, **table.info()) for name, table in self._tables.items()}

    def insert(self, data: Any, priorities: Mapping[str, float], timeout: float | None = None) -> None:
        """Writes one item to each table of ``priorities`` with its priority there."""
        for name, priority in priorities.items():
            self.table(name).insert(data, priority, timeout=timeout, wait=self._wait_on_insert)

    def sample(self, table: str, batch_size: int, timeout: float | None = None) -> ReplaySample:
        """A batch of ``batch_size`` items of ``table`` (see ``LocalTable.sample``)."""
        return self.table(table).sample(batch_size, timeout=timeout)

    def mutate_priorities(self, table: str, updates: Mapping[int, float]) -> None:
        """Sets the priorities of the items with the given keys (as ``reverb.Client.mutate_priorities``)."""
        keys = np.fromiter(updates.keys(), np.uint64, len(updates))
        self.table(table).update_priorities(keys, np.fromiter(updates.values(), np.float64, len(updates)))

    def trajectory_writer(self, num_keep_alive_refs: int, validate_items: bool = True) -> "LocalTrajectoryWriter":
        """A writer whose items may reference the last ``num_keep_alive_refs`` appended rows."""
        return LocalTrajectoryWriter(self, num_keep_alive_refs, validate_items)

    def save(self) -> dict:
        """Every table's items and counters, by name (a tree of arrays for a checkpoint)."""
        return {name: table.save() for name, table in self._tables.items()}

    def restore(self, state: Mapping[str, Any]) -> None:
        """Restores ``save()``'s state into tables of the same names and specs."""
        if sorted(state) != sorted(self._tables):
            raise ValueError(f"The saved replay has tables {sorted(state)}, this one {sorted(self._tables)}.")
        for name, table_state in state.items():
            self._tables[name].restore(table_state)


def stack_batches(sample: Any, num_batches: int) -> Any:
    """``[U * B, ...]`` leaves (of info and data) reshaped to ``[U, B, ...]``: U batches for U fused updates."""
    return tree.map_structure(lambda x: x.reshape(num_batches, -1, *x.shape[1:]), sample)


class LocalBatches(core.PrefetchingIterator):
    """Endless batches from a local table: ``[B, ...]`` leaves, or ``[U, B, ...]`` stacks for ``num_batches=U``.

    A stack is sampled at once (one gather per leaf) and counts as ``U * B``
    samples for the rate limiter. ``ready()`` says whether the limiter allows
    the next one now: a run whose actor and learner share a thread steps the
    learner exactly while it is true. ``next`` waits for the limiter (at most
    ``timeout`` seconds) when it is not.
    """

    def __init__(self, table: LocalTable, batch_size: int, num_batches: int = 1, timeout: float | None = None):
        self._table = table
        self._batch_size = batch_size
        self._num_batches = num_batches
        self._timeout = timeout
        self._retrieved = 0

    def __iter__(self) -> "LocalBatches":
        return self

    def __next__(self) -> ReplaySample:
        sample = self._table.sample(self._batch_size * self._num_batches, timeout=self._timeout)
        self._retrieved += 1
        return sample if self._num_batches == 1 else stack_batches(sample, self._num_batches)

    def ready(self) -> bool:
        return self._table.can_sample(self._batch_size * self._num_batches)

    def retrieved_elements(self) -> int:
        return self._retrieved


# ---------------------------------------------------------------------------------------------------
# The trajectory writer.


class _Column:
    """The values one leaf of the appended rows took, row by row (None where a row did not set it)."""

    __slots__ = ("_writer", "path", "values")

    def __init__(self, writer: "LocalTrajectoryWriter", path: tuple):
        self._writer = writer
        self.path = path
        self.values: list = []

    def __getitem__(self, index) -> "_Reference":
        if isinstance(index, (int, np.integer)):  # the common case: one row
            position = self._writer._row_of(int(index))
            value = self.values[position] if position < len(self.values) else None
            if value is None:
                raise _unset(self.path)
            return _Reference((value,), squeeze=True)
        values = [self.values[r] if r < len(self.values) else None for r in self._writer._rows_of(index)]
        if any(v is None for v in values):
            raise _unset(self.path)
        return _Reference(values, squeeze=False)


def _unset(path: tuple) -> ValueError:
    return ValueError(f"An item refers to rows where column {'/'.join(map(str, path))} was not set.")


class _Reference:
    """Rows of one column that an item refers to; ``numpy()`` gives their data."""

    __slots__ = ("_values", "_squeeze")

    def __init__(self, values, squeeze: bool):
        self._values = values
        self._squeeze = squeeze

    def numpy(self) -> np.ndarray:
        return self._values[0] if self._squeeze else np.stack(self._values)


class LocalTrajectoryWriter:
    """Appends rows and makes items of references into them, inserting into ``LocalReplay`` tables.

    The history is a nest of columns (the union of every appended row's
    structure); ``history[...][i]`` is row ``i`` (negative: from the newest),
    ``[a:b]`` a run of rows, and only the newest ``num_keep_alive_refs`` rows
    may be referenced. Items are inserted when created.
    """

    def __init__(self, replay: LocalReplay, num_keep_alive_refs: int, validate_items: bool = True):
        self._replay = replay
        self._keep = int(num_keep_alive_refs)
        self._validate = bool(validate_items)
        self._columns: dict[tuple, _Column] = {}
        self._template: Any = None
        self._history: Any = None  # the columns in the template's structure, rebuilt when columns are added
        self._paths: dict = {}  # a row's jax tree structure -> the dm-tree paths of its leaves
        self._checked: set = set()  # (table, item structure) pairs whose structure matched the signature
        self._num_rows = 0  # rows appended since the history was last cleared
        self._first_kept = 0  # values of rows before this were dropped
        self._episode_steps = 0

    @property
    def episode_steps(self) -> int:
        """Rows appended in the current episode."""
        return self._episode_steps

    @property
    def history(self) -> Any:
        """The columns, in the structure of the appended rows."""
        if self._history is None:
            self._history = tree.unflatten_as(
                self._template, [self._columns[path] for path, _ in tree.flatten_with_path(self._template)]
            )
        return self._history

    def append(self, data: Any) -> None:
        """Appends one row; its leaves (a nest, possibly setting only some columns) become column values."""
        values, structure = jax.tree_util.tree_flatten(data)
        paths = self._paths.get(structure)
        if paths is None:  # a row of a new structure: its paths, once
            paths = self._paths[structure] = [path for path, _ in tree.flatten_with_path(data)]
            if len(paths) != len(values):
                raise ValueError(f"A row holds None or another value that is not an array: {data!r}.")
        row = self._num_rows - self._first_kept
        for path, value in zip(paths, values):
            column = self._columns.get(path)
            if column is None:
                column = self._columns[path] = _Column(self, path)
                self._template = _merge(self._template, data)
                self._history = None
            if len(column.values) < row:
                column.values.extend([None] * (row - len(column.values)))
            column.values.append(np.asarray(value))
        self._num_rows += 1
        self._episode_steps += 1
        self._drop_old_rows()

    def _drop_old_rows(self) -> None:
        first_kept = max(self._first_kept, self._num_rows - self._keep)
        drop = first_kept - self._first_kept
        if drop > 0:
            for column in self._columns.values():
                del column.values[:drop]
            self._first_kept = first_kept

    def _row_of(self, index: int) -> int:
        """The position (in the kept values) of row ``index`` of a history of ``self._num_rows`` rows."""
        num_rows = self._num_rows
        if not -num_rows <= index < num_rows:
            raise IndexError(f"Row {index} is outside the history of {num_rows} rows.")
        row = index + num_rows if index < 0 else index
        if row < max(self._first_kept, num_rows - self._keep):
            raise IndexError(f"Row {row} is older than the {self._keep} rows the writer keeps (num_keep_alive_refs).")
        return row - self._first_kept

    def _rows_of(self, index: slice) -> range:
        """Row positions (in the kept values) of the slice ``index`` into the history."""
        rows = range(self._num_rows)[index]
        if len(rows) and rows[0] < max(self._first_kept, self._num_rows - self._keep):
            raise IndexError(
                f"Row {rows[0]} is older than the {self._keep} rows the writer keeps (num_keep_alive_refs)."
            )
        return range(rows.start - self._first_kept, rows.stop - self._first_kept, rows.step)

    def create_item(self, table: str, priority: float, trajectory: Any) -> None:
        """Inserts the item whose leaves are references into the history."""
        leaves = [reference.numpy() for reference in tree.flatten(trajectory)]  # in the table's leaf order
        target = self._replay.table(table)
        if self._validate and target.leaf_specs is not None:
            structure = jax.tree_util.tree_structure(trajectory)
            if (table, structure) not in self._checked:  # the nest once per structure, shapes every time
                _check_structure(target, tree.unflatten_as(trajectory, leaves))
                self._checked.add((table, structure))
            _check_leaves(target, leaves)
            target.insert_checked(leaves, priority, wait=self._replay.wait_on_insert)
        else:
            self._replay.insert(tree.unflatten_as(trajectory, leaves), {table: priority})

    def flush(self, block_until_num_items: int = 0, timeout_ms: int | None = None) -> None:
        """Items are inserted when created: nothing is ever in flight."""
        del block_until_num_items, timeout_ms

    def end_episode(self, clear_buffers: bool = True, timeout_ms: int | None = None) -> None:
        """Ends the episode; with ``clear_buffers`` the history starts empty again."""
        del timeout_ms
        self._episode_steps = 0
        if clear_buffers:
            self._columns = {}
            self._template = self._history = None
            self._num_rows = self._first_kept = 0

    def close(self) -> None:
        """Releases the history."""
        self.end_episode(clear_buffers=True)


def _merge(template: Any, data: Any) -> Any:
    """The union of two row structures: dicts merge key by key, anything else keeps the first seen."""
    if template is None:
        return data
    if isinstance(template, dict) and isinstance(data, dict):
        merged = dict(template)
        for key, value in data.items():
            merged[key] = _merge(merged.get(key), value)
        return merged
    return template


def _check_structure(table: LocalTable, data: Any) -> None:
    """Raises ValueError unless ``data`` has the nest structure of the table's signature (if it has one)."""
    if table.spec.signature is None:
        return
    try:
        tree.assert_same_structure(table.spec.signature, data)
    except (ValueError, TypeError) as error:
        raise ValueError(f"An item for table {table.name!r} does not have the table's signature: {error}") from None


def _check_leaves(table: LocalTable, leaves: list) -> None:
    """Raises ValueError unless the item's ``leaves`` have the signature's shapes and dtypes."""
    specs = table.leaf_specs
    if len(leaves) != len(specs):
        raise ValueError(
            f"An item for table {table.name!r} has {len(leaves)} arrays where the signature has {len(specs)}."
        )
    for (shape, dtype), value in zip(specs, leaves):
        if value.dtype != dtype or not fits(value.shape, shape):
            raise ValueError(
                f"An item for table {table.name!r} has a leaf of shape {value.shape} and dtype {value.dtype} where "
                f"the signature has shape {shape} and dtype {dtype}."
            )
