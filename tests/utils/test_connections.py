"""The authenticated listener under peers that misbehave: silent, with a wrong key, many at once; and close()."""

from __future__ import annotations

import itertools
import socket
import struct
import threading
import time
from multiprocessing.connection import AuthenticationError, Client, Listener
from typing import Any, Callable, Iterator

import pytest

from acme.utils import connections
from acme.utils.connections import AuthenticatedListener

ANSWERED_WITHIN = 10.0  # generous: a peer the listener serves is answered in milliseconds
_names = itertools.count()


@pytest.fixture
def listen() -> Iterator[Callable[..., AuthenticatedListener]]:
    """Opens echoing listeners on loopback, each with threads of its own name, and closes them after the test."""
    opened: list[AuthenticatedListener] = []

    def open_one(**kwargs: Any) -> AuthenticatedListener:
        listener = AuthenticatedListener(lambda message: message, f"test-{next(_names)}", "127.0.0.1", **kwargs)
        opened.append(listener)
        return listener

    yield open_one
    for listener in opened:
        listener.close()


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()`` on a thread of its own; fails the test unless it returned within ``seconds``."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(("returned", call()))
        except BaseException as error:  # handed to the test's thread
            outcome.append(("raised", error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"no answer within {seconds} s"
    kind, value = outcome[0]
    if kind == "raised":
        raise value
    return value


def _echo_with_client(listener: AuthenticatedListener, message: Any, authkey: bytes | None = None) -> Any:
    """``message`` sent and answered over the standard library's client (the wire protocol peers speak)."""
    host, port, key = listener.address
    with Client((host, port), authkey=key if authkey is None else authkey) as connection:
        connection.send(message)
        return connection.recv()


def _idle(listener: AuthenticatedListener) -> socket.socket:
    """A peer that connects and sends nothing."""
    host, port, _ = listener.address
    peer = socket.create_connection((host, port))
    peer.settimeout(ANSWERED_WITHIN)
    return peer


def _read_until_closed(peer: socket.socket) -> None:
    """Reads what the listener sends (its challenge) until it closes the connection; the socket's timeout fails
    it otherwise."""
    while peer.recv(4096):
        pass


def _threads(listener: AuthenticatedListener) -> list[threading.Thread]:
    prefix = listener._name + "-"
    return [thread for thread in threading.enumerate() if thread.name.startswith(prefix)]


def test_a_silent_peer_holds_up_no_other_and_is_dropped_at_the_handshake_deadline(listen):
    listener = listen(handshake_seconds=0.5)
    idle = _idle(listener)
    try:
        assert _within(ANSWERED_WITHIN, lambda: _echo_with_client(listener, "hello")) == ("ok", "hello")
        started = time.monotonic()
        _read_until_closed(idle)  # a socket.timeout here: the listener kept the silent peer
        assert time.monotonic() - started < ANSWERED_WITHIN
    finally:
        idle.close()


def test_many_silent_peers_hold_up_no_other(listen):
    listener = listen(handshake_seconds=60.0)  # they are all still waiting when the good peer comes
    idle = [_idle(listener) for _ in range(20)]
    try:
        assert _within(ANSWERED_WITHIN, lambda: _echo_with_client(listener, 7)) == ("ok", 7)
        with connections.connect(listener.address, timeout=ANSWERED_WITHIN) as connection:
            connection.send([1, 2])
            assert connection.recv() == ("ok", [1, 2])
    finally:
        for peer in idle:
            peer.close()


def test_a_peer_with_a_wrong_key_or_not_speaking_the_protocol_is_dropped_and_the_others_go_on(listen):
    listener = listen()
    with pytest.raises(AuthenticationError):
        _within(ANSWERED_WITHIN, lambda: _echo_with_client(listener, "x", authkey=b"not the key"))
    with pytest.raises(AuthenticationError):
        connections.connect(listener.address[:2] + (b"not the key",), timeout=ANSWERED_WITHIN)
    garbage = _idle(listener)
    try:
        garbage.sendall(struct.pack("!i", 1 << 30))  # a reply to the challenge a gigabyte long
        _read_until_closed(garbage)
    finally:
        garbage.close()
    assert _within(ANSWERED_WITHIN, lambda: _echo_with_client(listener, "after")) == ("ok", "after")


def test_close_ends_connections_key_checks_and_threads(listen):
    listener = listen(handshake_seconds=60.0)
    idle = _idle(listener)
    connection = connections.connect(listener.address, timeout=ANSWERED_WITHIN)
    try:
        connection.send("before")
        assert connection.recv() == ("ok", "before")
        listener.close()
        _read_until_closed(idle)  # the key check in progress ended with close(), not its deadline
        with pytest.raises((EOFError, OSError)):
            connection.send("after")
            connection.recv()
        with pytest.raises(ConnectionError):
            connections.connect(listener.address, timeout=ANSWERED_WITHIN)
        deadline = time.monotonic() + ANSWERED_WITHIN
        while _threads(listener):
            assert time.monotonic() < deadline, f"threads left after close(): {_threads(listener)}"
            _threads(listener)[0].join(0.1)
        listener.close()  # again: nothing to do
    finally:
        connection.close()
        idle.close()


def test_connect_fails_with_a_timeout_where_nothing_passes_the_key_check():
    with socket.create_server(("127.0.0.1", 0), backlog=4) as never_accepts:  # peers wait in its backlog
        host, port = never_accepts.getsockname()[:2]
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=rf"127\.0\.0\.1:{port} did not accept and pass the key check"):
            connections.connect((host, port, b"key"), timeout=0.3)
        assert time.monotonic() - started < ANSWERED_WITHIN


def test_connect_speaks_the_standard_librarys_protocol():
    key = b"a key"
    with Listener(("127.0.0.1", 0), authkey=key) as listener:
        accepted: list = []
        thread = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
        thread.start()
        with connections.connect((*listener.address, key), timeout=ANSWERED_WITHIN) as connection:
            thread.join(ANSWERED_WITHIN)
            assert accepted, "the standard library's listener did not accept the connection"
            with accepted[0] as served:
                connection.send("ping")
                assert served.recv() == "ping"


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan"), float("inf"), True, "5", None])
def test_a_handshake_deadline_that_is_not_a_positive_number_of_seconds_is_refused(seconds):
    with pytest.raises(ValueError, match=r"handshake_seconds must be a positive, finite number of seconds"):
        AuthenticatedListener(lambda message: message, "refused", "127.0.0.1", handshake_seconds=seconds)
    with pytest.raises(ValueError, match=r"timeout must be a positive, finite number of seconds"):
        connections.connect(("127.0.0.1", 1, b"key"), timeout=seconds)
