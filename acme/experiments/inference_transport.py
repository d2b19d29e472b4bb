"""A direct connection from actors to an ``InferenceServer`` in another process.

A Ray method call per environment step costs milliseconds of CPU (in the caller, the callee and Ray's daemons);
an actor that acts through the server makes one per step. ``InferenceListener`` instead opens a socket in the
server's process (``acme.utils.connections``: on the node's address, with a random key that
``multiprocessing.connection`` checks by HMAC before anything is unpickled) and answers each connection on its
own thread; ``InferenceClient`` is the actor's
end, with the server's ``select`` and ``forget``. Actors get the address and key once, through the node's handle.
A server whose process dies fails its actors' next ``select`` with ``InferenceServerGoneError``, naming it.
"""

from __future__ import annotations

import threading
from typing import Any

from acme.utils.connections import AuthenticatedListener, connect


class InferenceListener:
    """Serves ``server.select`` and ``server.forget`` to ``InferenceClient``\\ s; see the module's docstring."""

    def __init__(self, server: Any, host: str | None = None):
        self._server = server
        self._connections = AuthenticatedListener(self._answer, "inference", host)

    @property
    def address(self) -> tuple[str, int, bytes]:
        """``(host, port, key)``: what an ``InferenceClient`` needs."""
        return self._connections.address

    def _answer(self, message: tuple) -> Any:
        method, arguments = message
        if method == "select":
            return self._server.select(*arguments)
        if method == "forget":
            return self._server.forget(*arguments)
        raise ValueError(f"unknown method {method!r}; the server answers 'select' and 'forget'")

    def close(self) -> None:
        """Stops accepting and closes every connection."""
        self._connections.close()


class InferenceServerGoneError(RuntimeError):
    """The inference server's process died or closed the connection: the actor cannot act without it."""


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class InferenceClient:
    """An actor's connection to an ``InferenceServer``'s listener: the server's ``select`` and ``forget``.

    A server that cannot be reached, or whose process dies, raises ``InferenceServerGoneError`` naming its
    address, on this call and on every later one.
    """

    def __init__(self, host: str, port: int, authkey: bytes):
        self._address = f"{host}:{port}"
        try:
            self._connection = connect((host, port, authkey))
        except (EOFError, ConnectionError, TimeoutError) as error:
            raise InferenceServerGoneError(
                f"Cannot reach the inference server at {self._address} ({_describe(error)}): its process is not "
                "running or does not listen there any more."
            ) from error
        self._lock = threading.Lock()
        self._gone: str | None = None

    def _call(self, method: str, *arguments: Any) -> Any:
        with self._lock:
            if self._gone is not None:
                raise InferenceServerGoneError(self._gone)
            try:
                self._connection.send((method, arguments))
                status, value = self._connection.recv()
            except (EOFError, OSError) as error:
                self._gone = (
                    f"The inference server at {self._address} is gone ({_describe(error)}): its process died or "
                    "closed the connection, and this actor acts only through it."
                )
                raise InferenceServerGoneError(self._gone) from error
        if status != "ok":
            raise RuntimeError(f"The inference server could not {method}: {value}")
        return value

    def select(self, *arguments: Any) -> Any:
        return self._call("select", *arguments)

    def forget(self, client: str) -> None:
        """Drops ``client``'s recurrent states on the server; nothing to drop on a server that is gone."""
        try:
            self._call("forget", client)
        except InferenceServerGoneError:
            pass  # the states went with the server: an actor closing after the error it already raised

    def close(self) -> None:
        self._connection.close()
