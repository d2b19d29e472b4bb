"""Authenticated direct connections between the nodes of a program: a listener that answers requests.

A Ray call per request costs milliseconds of CPU in the caller, the callee and Ray's daemons; the transports
built on this (the replay feed, ``acme.replay.direct``, and the inference server's, ``acme.experiments.
inference_transport``) instead open a socket in the serving process. ``AuthenticatedListener`` listens on the
node's address (``node_host``: loopback unless Ray's node has another address, as with ``--bind-address``) with
a random key, which ``multiprocessing.connection``'s challenge checks by HMAC, both ways, before anything is
unpickled: a peer without the key is refused. Each connection is checked and then answered on its own thread, so
a peer that connects and sends nothing holds up no other: it is dropped once ``HANDSHAKE_SECONDS`` have passed.
Every message gets one reply, ``("ok", value)`` or ``("error", "Type: message")``. Peers get the address and key
through the node's handle and connect with ``connect``, which has the same deadline for the listener's answer
(``multiprocessing.connection.Client`` also connects: the wire protocol is the same).
"""

from __future__ import annotations

import math
import os
import selectors
import socket
import struct
import threading
import time
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from typing import Any, Callable

HANDSHAKE_SECONDS = 10.0
"""How long a peer has to pass the key check, both ways, once connected: a listener then drops it, and
``connect`` fails. Either side answers in milliseconds; this only bounds how long a silent peer holds a thread."""

BACKLOG = 64
"""Connections the operating system holds until the listener accepts them (each is then checked on its own
thread): enough for every actor of a run restarting at once."""

_ACCEPT_RETRY_SECONDS = 0.1  # after an accept that failed for want of resources (descriptors, memory)


def node_host() -> str:
    """The address other nodes reach this process at: Ray's node address in a Ray worker, else loopback."""
    try:
        import ray

        if ray.is_initialized():
            return ray.util.get_node_ip_address()
    except ImportError:
        pass
    return "127.0.0.1"


def _check_seconds(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}.")
    return float(value)


class _Handshake:
    """What ``deliver_challenge`` and ``answer_challenge`` call on a connection, ``send_bytes`` and
    ``recv_bytes``, on a socket, framed as ``multiprocessing.connection`` frames a message (its length, a
    4-byte big-endian signed integer, then its bytes), all before one deadline (``TimeoutError`` after it)."""

    def __init__(self, peer: socket.socket, deadline: float):
        self._peer = peer
        self._deadline = deadline

    def _wait_at_most(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the key check was not done before its deadline")
        self._peer.settimeout(left)

    def send_bytes(self, data: bytes) -> None:
        self._wait_at_most()
        self._peer.sendall(struct.pack("!i", len(data)) + data)

    def recv_bytes(self, maxlength: int) -> bytes:
        (size,) = struct.unpack("!i", self._read(4))
        if not 0 <= size <= maxlength:  # as multiprocessing says of a message longer than asked for
            raise OSError(f"bad message length: the key check takes messages of 0 to {maxlength} bytes, got {size}")
        return self._read(size)

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            self._wait_at_most()
            chunk = self._peer.recv(size - len(data))
            if not chunk:
                raise EOFError("the peer closed the connection during the key check")
            data += chunk
        return data


def connect(address: tuple[str, int, bytes], timeout: float = HANDSHAKE_SECONDS) -> Connection:
    """A connection to the listener at ``address`` (its ``(host, port, key)``), as
    ``multiprocessing.connection.Client`` makes, but within ``timeout`` seconds: a listener that does not
    accept and pass the key check by then raises ``TimeoutError``. A wrong key raises ``AuthenticationError``,
    a listener that is not there ``ConnectionError`` (both as ``Client`` does)."""
    host, port, authkey = address
    timeout = _check_seconds(timeout, "timeout")
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as peer:
            handshake = _Handshake(peer, deadline)
            answer_challenge(handshake, authkey)
            deliver_challenge(handshake, authkey)
            peer.settimeout(None)
            return Connection(peer.detach())
    except TimeoutError as error:
        raise TimeoutError(
            f"the listener at {host}:{port} did not accept and pass the key check within {timeout:g} s ({error}): "
            "its process is stuck, or what listens there is not an AuthenticatedListener"
        ) from error


class AuthenticatedListener:
    """Answers each message of each connected peer with ``answer(message)``; see the module's docstring.

    Args:
      answer: called on a connection's thread with each message; its return value is the reply, and an
        exception it raises is sent back as the error's type and text.
      name: names the threads (``{name}-listener``, ``{name}-connection``).
      host: the address to listen on; by default ``node_host()``.
      handshake_seconds: how long a peer has to pass the key check before it is dropped.
    """

    def __init__(
        self,
        answer: Callable[[Any], Any],
        name: str,
        host: str | None = None,
        handshake_seconds: float = HANDSHAKE_SECONDS,
    ):
        self._handshake_seconds = _check_seconds(handshake_seconds, "handshake_seconds")
        self._answer = answer
        self._name = name
        self._authkey = os.urandom(32)
        self._socket = socket.create_server((host or node_host(), 0), backlog=BACKLOG)
        self._socket.setblocking(False)  # accepted only once the selector says a peer waits
        self._where = self._socket.getsockname()[:2]  # still known once closed
        self._wake, self._waker = socket.socketpair()  # close() writes to the waker to end the accepting thread
        self._peers: set[socket.socket] = set()  # the sockets of the peers being checked or answered
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._accepting = threading.Thread(target=self._accept, name=f"{name}-listener", daemon=True)
        self._accepting.start()

    @property
    def address(self) -> tuple[str, int, bytes]:
        """``(host, port, key)``: what a peer needs to connect."""
        host, port = self._where
        return host, port, self._authkey

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def _accept(self) -> None:
        """Hands each peer to a thread of its own, until ``close()``."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._socket, selectors.EVENT_READ)
            selector.register(self._wake, selectors.EVENT_READ)
            while True:
                selector.select()
                if self._closed.is_set():
                    return
                try:
                    peer, _ = self._socket.accept()
                except (BlockingIOError, ConnectionAbortedError):  # the peer left before it was accepted
                    continue
                except OSError:  # out of descriptors or memory: the peers wait in the backlog meanwhile
                    self._closed.wait(_ACCEPT_RETRY_SECONDS)
                    continue
                self._start(peer)

    def _start(self, peer: socket.socket) -> None:
        with self._lock:
            if self._closed.is_set():
                peer.close()
                return
            self._peers.add(peer)
        try:
            threading.Thread(target=self._serve, args=(peer,), name=f"{self._name}-connection", daemon=True).start()
        except RuntimeError:  # no thread to be had: this peer is refused, the others go on
            self._drop(peer)

    def _authenticate(self, peer: socket.socket) -> Connection:
        """The peer's connection once it passed the key check, both ways, within ``handshake_seconds``."""
        handshake = _Handshake(peer, time.monotonic() + self._handshake_seconds)
        deliver_challenge(handshake, self._authkey)
        answer_challenge(handshake, self._authkey)
        peer.settimeout(None)
        # A descriptor of its own, so that close() can shut ``peer`` down (waking a wait for a message on this
        # one) while only this thread ever closes either.
        return Connection(os.dup(peer.fileno()))

    def _serve(self, peer: socket.socket) -> None:
        try:
            connection = self._authenticate(peer)
        except Exception:  # silent past the deadline, a wrong key, not the protocol, or closed: dropped
            self._drop(peer)
            return
        try:
            while True:
                message = connection.recv()
                try:
                    reply = ("ok", self._answer(message))
                except Exception as error:  # told to the peer, whose call raises it
                    reply = ("error", f"{type(error).__name__}: {error}")
                connection.send(reply)
        except (EOFError, OSError):  # the peer closed its end, or the listener was closed
            pass
        finally:
            connection.close()
            self._drop(peer)

    def _drop(self, peer: socket.socket) -> None:
        """Closes a peer's socket, first taking it from the peers ``close()`` shuts down (under the lock, so that
        it never shuts down a descriptor closed and reused meanwhile)."""
        with self._lock:
            self._peers.discard(peer)
        peer.close()

    def close(self) -> None:
        """Stops accepting and ends every connection (a peer's next call then fails) and every key check; the
        listener's threads end (a connection's once ``answer`` returns)."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._waker.send(b"\0")
        self._accepting.join()
        for own in (self._socket, self._wake, self._waker):
            own.close()
        with self._lock:
            for peer in self._peers:  # each thread then reads the end of its connection, and closes it
                try:
                    peer.shutdown(socket.SHUT_RDWR)
                except OSError:  # the peer had already gone
                    pass
