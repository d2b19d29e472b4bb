"""Replay items carried to the learner's local tables over a direct, authenticated connection: no reverb.

``ReplayListener`` runs in the process that holds the tables (the learner's
``LocalReplay``). It listens on the node's address with a random key, which
``multiprocessing.connection`` checks by HMAC before anything is unpickled
(``acme.utils.connections``). One thread per connected actor inserts each item
it receives into its table with the item's priority, waiting for the table's
rate limiter, and then acknowledges it.

``RemoteReplay`` is the actor's end. The adders write to it as they write to a
``LocalReplay``: the same ``LocalTrajectoryWriter`` assembles and checks each
item in the actor. Each finished item then crosses the connection once, with
its priority. At most ``max_in_flight`` items wait for acknowledgement, and the
next insert waits for the oldest. An actor therefore slows to the learner's
rate limiter (back-pressure), as reverb's writers do. A listener that refuses an
item (an unknown table, a wrong shape), or that is gone, fails the actor's next
call with ``ReplayTransportError``, naming why. Given a ``reconnect`` function
(the listener's address now: a restarted learner listens anew), a lost
connection is made again instead, and the items in flight are dropped and
counted (``dropped_items``), as reverb's queues lose theirs with the server.

``RemoteTables`` is the learner's end when the tables live in a replay node of
their own: the listener also samples them (waiting, as in-process, for the
rate limiter), updates their priorities, and gives their state for the
learner's checkpoint, one request and its reply at a time. ``LocalBatches``
samples it as it samples a ``LocalReplay``.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np
import tree

from acme.replay import tables
from acme.replay.local import RateLimiterTimeout, ReplaySample, _shape_dtype
from acme.replay.local_client import LocalReplay, LocalTablesClient, LocalTrajectoryWriter, TableInfo, _check_leaves
from acme.utils.connections import AuthenticatedListener, connect

_POLL_SECONDS = 0.1  # how often an insert waiting on the rate limiter looks whether the listener was closed
_REQUESTS = ("insert", "info", "sample", "can_sample", "mutate_priorities", "save")


class ReplayTransportError(RuntimeError):
    """The replay listener refused an item, or cannot be reached any more."""


class ReplayListener:
    """Inserts the items ``RemoteReplay``\\ s send into ``replay``'s tables, and answers a ``RemoteTables``'
    requests; see the module's docstring."""

    def __init__(self, replay: LocalReplay, host: str | None = None):
        self._replay = replay
        self._lock = threading.Lock()
        self._received = 0
        self._connections = AuthenticatedListener(self._answer, "replay", host)

    @property
    def address(self) -> tuple[str, int, bytes]:
        """``(host, port, key)``: what a ``RemoteReplay`` or ``RemoteTables`` needs."""
        return self._connections.address

    @property
    def received(self) -> int:
        """Items inserted so far."""
        with self._lock:
            return self._received

    def _insert(self, name: str, priority: float, leaves: list) -> int:
        table = self._replay.table(name)  # KeyError naming the tables there are
        leaves = [np.asarray(leaf) for leaf in leaves]
        _check_leaves(table, leaves)
        return self._past_limiter(lambda wait: table.insert_checked(leaves, float(priority), timeout=wait), "item")

    def _sample(self, name: str, batch_size: int, timeout: float | None) -> ReplaySample:
        table = self._replay.table(name)
        return self._past_limiter(lambda wait: table.sample(batch_size, timeout=wait), "sample", timeout)

    def _past_limiter(self, attempt: Callable[[float], Any], what: str, timeout: float | None = None) -> Any:
        """``attempt(wait)``, tried again every ``_POLL_SECONDS`` while the table's rate limiter holds it, until it
        goes through, the listener is closed (``ReplayTransportError``) or ``timeout`` has passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _POLL_SECONDS if deadline is None else min(_POLL_SECONDS, max(0.0, deadline - time.monotonic()))
            try:
                return attempt(wait)
            except RateLimiterTimeout:
                if self._connections.closed:
                    raise ReplayTransportError(f"the replay listener was closed while the {what} waited") from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    def _answer(self, message: tuple) -> Any:
        kind, arguments = message[0], message[1:]
        if kind == "insert":
            key = self._insert(*arguments)
            with self._lock:
                self._received += 1
            return key
        if kind == "info":
            return {name: vars(info) for name, info in self._replay.server_info().items()}
        if kind == "sample":
            return self._sample(*arguments)
        if kind == "can_sample":
            name, count = arguments
            return self._replay.table(name).can_sample(count)
        if kind == "mutate_priorities":
            self._replay.mutate_priorities(*arguments)
            return None
        if kind == "save":
            return self._replay.save()
        raise ValueError(f"unknown request {kind!r}; the listener answers {', '.join(map(repr, _REQUESTS))}")

    def close(self) -> None:
        """Stops accepting, ends the inserts and samples waiting on a rate limiter, and closes every connection."""
        self._connections.close()


class _RemoteTable:
    """What ``LocalTrajectoryWriter`` reads of a table (name, spec, leaf specs), inserting over the connection."""

    def __init__(self, replay: "RemoteReplay", spec: tables.TableSpec):
        self._replay = replay
        self.spec = spec
        self.name = spec.name
        self.leaf_specs = None if spec.signature is None else [_shape_dtype(x) for x in tree.flatten(spec.signature)]

    def insert_checked(self, leaves: list, priority: float = 1.0, timeout: float | None = None, wait: bool = True):
        del timeout, wait  # the listener waits for the rate limiter; this end waits for acknowledgements
        self._replay._send(("insert", self.name, float(priority), list(leaves)))


class RemoteReplay:
    """An actor's replay client that sends each item to a ``ReplayListener``; see the module's docstring.

    ``table_specs`` are the learner's tables' specs (the builder's), for the
    items' checks in the actor; ``address`` is the listener's ``(host, port, key)``.
    With ``reconnect`` (a function that returns the listener's address now, or
    raises ``ReplayTransportError`` to give up), a lost connection is made again
    for at most ``reconnect_seconds``.
    """

    def __init__(
        self,
        address: tuple[str, int, bytes],
        table_specs: Sequence[tables.TableSpec],
        max_in_flight: int = 64,
        reconnect: Callable[[], tuple[str, int, bytes]] | None = None,
        reconnect_seconds: float = 300.0,
    ):
        if isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 1:
            raise ValueError(f"max_in_flight must be an integer >= 1, got {max_in_flight!r}.")
        self._tables = {spec.name: _RemoteTable(self, spec) for spec in table_specs}
        self._max_in_flight = max_in_flight
        self._in_flight: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self._failed: str | None = None
        self._reconnect = reconnect
        self._reconnect_seconds = float(reconnect_seconds)
        self._dropped = 0
        self._closing = threading.Lock()
        self._closed = False
        self._connect(address)

    def _connect(self, address: tuple[str, int, bytes]) -> None:
        host, port, authkey = address
        self._where = f"{host}:{port}"
        try:
            self._connection = connect((host, port, authkey))
        except (EOFError, OSError) as error:
            raise ReplayTransportError(
                f"Cannot reach the replay listener at {self._where} ({type(error).__name__}: {error}): the process "
                "holding the tables is not running or does not listen there."
            ) from error

    @property
    def dropped_items(self) -> int:
        """Items in flight when a connection was lost and made again (never inserted)."""
        return self._dropped

    def _lost(self, reason: str) -> None:
        """The connection failed: without ``reconnect`` (or once aborted) that is final; else connects to the
        listener's address now, dropping the items in flight."""
        if self._reconnect is None or self._failed is not None:
            self._fail(reason)
        self._dropped += len(self._in_flight)
        self._in_flight.clear()
        deadline = time.monotonic() + self._reconnect_seconds
        while True:
            try:
                self._connect(self._reconnect())
                return
            except ReplayTransportError as error:
                if "Cannot reach" not in str(error):  # the reconnect function gave up
                    self._fail(f"{reason} {error}")
            except Exception:  # the listener's process is restarting: ask again
                pass
            if time.monotonic() > deadline:
                self._fail(f"{reason} No listener could be reached again within {self._reconnect_seconds:g} s.")
            time.sleep(0.2)

    wait_on_insert = True

    def table(self, name: str) -> _RemoteTable:
        try:
            return self._tables[name]
        except KeyError:
            raise KeyError(f"No replay table {name!r}; the tables are {sorted(self._tables)}.") from None

    def trajectory_writer(self, num_keep_alive_refs: int, validate_items: bool = True) -> LocalTrajectoryWriter:
        """The writer the adders use: items assembled and checked here, sent when created."""
        return LocalTrajectoryWriter(self, num_keep_alive_refs, validate_items)  # type: ignore[arg-type]

    def insert(self, data: Any, priorities: dict, timeout: float | None = None) -> None:
        """Sends one item to each table of ``priorities`` with its priority there."""
        leaves = [np.asarray(leaf) for leaf in tree.flatten(data)]
        for name, priority in priorities.items():
            self.table(name).insert_checked(leaves, priority)

    def server_info(self) -> dict[str, TableInfo]:
        """The learner's tables' sizes and counters, asked of the listener (after every item in flight)."""
        with self._lock:
            self._receive(0)
            self._exchange(("info",))
            reply = self._reply()
            if reply is None:  # connected again: ask the new listener
                self._exchange(("info",))
                reply = self._reply()
            status, infos = reply
            if status != "ok":
                self._fail(f"The replay listener at {self._where} could not say its tables' sizes: {infos}")
        return {name: TableInfo(**info) for name, info in infos.items()}

    def flush(self) -> None:
        """Waits until the listener has inserted every item sent."""
        with self._lock:
            self._receive(0)

    def _send(self, message: tuple) -> None:
        with self._lock:
            self._receive(self._max_in_flight - 1)
            self._exchange(message)
            self._in_flight.append(message[1])

    def _exchange(self, message: tuple) -> None:
        self._check()
        for attempt in range(2):  # once more on a connection made again
            try:
                self._connection.send(message)
                return
            except (EOFError, OSError) as error:
                self._lost(f"The replay listener at {self._where} is gone ({type(error).__name__}: {error}).")
        self._fail(f"The replay listener at {self._where} took no message after connecting again.")

    def _receive(self, at_most: int) -> None:
        """Reads acknowledgements until at most ``at_most`` items are in flight."""
        while len(self._in_flight) > at_most:
            table = self._in_flight[0]
            reply = self._reply()
            if reply is None:  # connected again, the items in flight dropped
                return
            self._in_flight.popleft()
            status, value = reply
            if status != "ok":
                self._fail(f"The replay listener at {self._where} refused an item for table {table!r}: {value}")

    def _reply(self) -> tuple | None:
        """The next reply; None when the connection was lost and made again."""
        self._check()
        try:
            return self._connection.recv()
        except (EOFError, OSError) as error:
            self._lost(
                f"The replay listener at {self._where} is gone ({type(error).__name__}: {error}): the process "
                "holding the tables died or closed the connection."
            )
            return None

    def _fail(self, reason: str) -> None:
        self._failed = reason
        raise ReplayTransportError(reason)

    def _check(self) -> None:
        if self._failed is not None:
            raise ReplayTransportError(self._failed)

    def abort(self) -> None:
        """Closes the connection at once, dropping the items in flight; safe from another thread (a call blocked
        on an acknowledgement returns with ``ReplayTransportError``)."""
        self._failed = self._failed or f"The connection to the replay listener at {self._where} was aborted."
        self._close_connection()

    def _close_connection(self) -> None:
        """Closes the connection once, whichever of ``abort`` (another thread) and ``close`` comes first."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
        try:
            self._connection.close()
        except OSError:
            pass

    def close(self) -> None:
        """Waits for the items in flight (unless the connection failed), then closes the connection."""
        try:
            if self._failed is None:
                self.flush()
        finally:
            self._close_connection()


class _SampledTable:
    """A table of a replay node as ``LocalBatches`` samples it."""

    def __init__(self, tables_: "RemoteTables", name: str):
        self._tables = tables_
        self.name = name

    def sample(self, batch_size: int, timeout: float | None = None) -> ReplaySample:
        return self._tables.sample(self.name, batch_size, timeout)

    def can_sample(self, count: int = 1) -> bool:
        return self._tables._call("can_sample", self.name, count)


class RemoteTables(LocalTablesClient):
    """The learner's client of a replay node's local tables (a ``ReplayListener`` at ``address``): samples,
    priority updates, sizes and the tables' state for a checkpoint, each a request and its reply. Calls from
    several threads take turns."""

    def __init__(self, address: tuple[str, int, bytes]):
        host, port, authkey = address
        self._where = f"{host}:{port}"
        self._lock = threading.Lock()
        try:
            self._connection = connect((host, port, authkey))
        except (EOFError, OSError) as error:
            raise ReplayTransportError(
                f"Cannot reach the replay node at {self._where} ({type(error).__name__}: {error})."
            ) from error
        self._names = sorted(self.server_info())

    def _call(self, *message: Any) -> Any:
        with self._lock:
            try:
                self._connection.send(message)
                status, value = self._connection.recv()
            except (EOFError, OSError) as error:
                raise ReplayTransportError(
                    f"The replay node at {self._where} is gone ({type(error).__name__}: {error})."
                ) from error
        if status != "ok":
            if value.startswith(RateLimiterTimeout.__name__):
                raise RateLimiterTimeout(value)
            raise ReplayTransportError(f"The replay node at {self._where} refused {message[0]!r}: {value}")
        return value

    def table(self, name: str) -> _SampledTable:
        if name not in self._names:
            raise KeyError(f"No replay table {name!r}; the tables are {self._names}.")
        return _SampledTable(self, name)

    def server_info(self) -> dict[str, TableInfo]:
        return {name: TableInfo(**info) for name, info in self._call("info").items()}

    def sample(self, table: str, batch_size: int, timeout: float | None = None) -> ReplaySample:
        """A batch of ``table``'s items, sampled in the node (waiting there for its rate limiter, at most
        ``timeout`` seconds, else ``RateLimiterTimeout``)."""
        return self._call("sample", table, batch_size, timeout)

    def mutate_priorities(self, table: str, updates: dict) -> None:
        self._call("mutate_priorities", table, dict(updates))

    def save(self) -> dict:
        """The node's tables' items and counters, by name (as ``LocalReplay.save``)."""
        return self._call("save")

    def close(self) -> None:
        self._connection.close()
