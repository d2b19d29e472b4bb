"""Authenticated direct connections between the nodes of a program: a listener that answers requests.

A Ray call per request costs milliseconds of CPU in the caller, the callee and Ray's daemons; the transports
built on this (the replay feed, ``acme.replay.direct``, and the inference server's, ``acme.experiments.
inference_transport``) instead open a socket in the serving process. ``AuthenticatedListener`` listens on the
node's address (``node_host``: loopback unless Ray's node has another address, as with ``--bind-address``) with
a random key, which ``multiprocessing.connection`` checks by HMAC, both ways, before anything is unpickled: a
peer without the key is refused. Each connection is answered on its own thread: every message gets one reply,
``("ok", value)`` or ``("error", "Type: message")``. Peers get the address and key through the node's handle.
"""

from __future__ import annotations

import os
import threading
from multiprocessing.connection import Connection, Listener
from typing import Any, Callable


def node_host() -> str:
    """The address other nodes reach this process at: Ray's node address in a Ray worker, else loopback."""
    try:
        import ray

        if ray.is_initialized():
            return ray.util.get_node_ip_address()
    except ImportError:
        pass
    return "127.0.0.1"


class AuthenticatedListener:
    """Answers each message of each connected peer with ``answer(message)``; see the module's docstring.

    Args:
      answer: called on a connection's thread with each message; its return value is the reply, and an
        exception it raises is sent back as the error's type and text.
      name: names the threads (``{name}-listener``, ``{name}-connection``).
      host: the address to listen on; by default ``node_host()``.
    """

    def __init__(self, answer: Callable[[Any], Any], name: str, host: str | None = None):
        self._answer = answer
        self._name = name
        self._authkey = os.urandom(32)
        self._listener = Listener((host or node_host(), 0), authkey=self._authkey)
        self._where = self._listener.address  # still known once closed
        self._connections: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name=f"{name}-listener", daemon=True).start()

    @property
    def address(self) -> tuple[str, int, bytes]:
        """``(host, port, key)``: what a peer needs to connect."""
        host, port = self._where
        return host, port, self._authkey

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection = self._listener.accept()
            except Exception:  # closed, or a peer that failed the key check: it is refused, the others go on
                continue
            with self._lock:
                if self._closed.is_set():  # a waiting accept can take one peer after close(): it is not served
                    connection.close()
                    continue
                self._connections.append(connection)
            threading.Thread(
                target=self._serve, args=(connection,), name=f"{self._name}-connection", daemon=True
            ).start()

    def _serve(self, connection: Connection) -> None:
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
        except TypeError:  # close() closed this connection while it waited for a message (its handle is gone)
            if not self._closed.is_set():
                raise
        finally:
            self._close_once(connection)

    def _close_once(self, connection: Connection) -> None:
        """Closes ``connection`` unless ``close()`` or its serving thread already did: whoever takes it from the
        list closes it (two closes of one descriptor fail, or could close another socket given its number)."""
        with self._lock:
            if connection not in self._connections:
                return
            self._connections.remove(connection)
        try:
            connection.close()
        except OSError:
            pass

    def close(self) -> None:
        """Stops accepting and closes every connection (a peer's next call then fails)."""
        self._closed.set()
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            self._close_once(connection)
