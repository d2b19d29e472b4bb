"""Node kinds: what a program is made of, and how each kind is instantiated.

A node is a *description*; ``instantiate`` builds the running ``NodeInstance``
inside the process that hosts the node (the launching process for the threads
launcher, a Ray actor for the Ray launcher).
"""

from __future__ import annotations

import abc
import inspect
from typing import Any, Callable, Sequence

from launch import network
from launch.reverb_server import start_reverb_server


class NodeInstance(abc.ABC):
    """A node built from its (dereferenced) arguments."""

    #: True if ``main()`` does work (a function, or a service with ``run()``).
    has_main: bool = False
    #: The object that handles to this node expose (service object), if any.
    target: Any = None
    #: The address handles to this node resolve to (reverb), if any.
    address: str | None = None

    def main(self) -> Any:
        """Runs the node's work (the function, or the service's ``run()``); returns what it returned."""

    def stop(self) -> None:
        """Asks the node to stop (calls the service's ``stop()`` if any)."""

    def public_methods(self) -> list[str]:
        """Names of the callable public attributes of ``target``."""
        if self.target is None:
            return []
        names = []
        for name in dir(self.target):
            if name.startswith("_"):
                continue
            try:
                attr = inspect.getattr_static(self.target, name)
            except AttributeError:
                continue
            if isinstance(attr, (staticmethod, classmethod)) or callable(attr):
                names.append(name)
        return sorted(names)


class Node(abc.ABC):
    """Base class of program nodes."""

    #: What a handle to this node dereferences to: "service", "address" or None
    #: (a node whose handle cannot be passed to other nodes).
    handle_kind: str | None = None
    #: The launchers that can run this node (None: every launcher).
    launchers: tuple[str, ...] | None = None
    #: Said when another launcher is asked for.
    why: str = ""

    @property
    def arguments(self) -> tuple[tuple, dict]:
        """The ``(args, kwargs)`` given to the node; may contain handles."""
        return (), {}

    @abc.abstractmethod
    def default_label(self) -> str:
        """A label used when ``add_node`` is given none."""

    @abc.abstractmethod
    def instantiate(self, args: tuple, kwargs: dict, *, host: str) -> NodeInstance:
        """Builds the node from dereferenced arguments (runs user code)."""


def _check_callable(kind: str, what: str, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"{kind} needs a callable {what}, got {value!r}")


def _name_of(value: Any, default: str) -> str:
    return getattr(value, "__name__", None) or default


class FunctionNode(Node):
    """Runs ``fn(*args, **kwargs)``; the node is done when ``fn`` returns."""

    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        _check_callable("FunctionNode", "function", fn)
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    @property
    def arguments(self) -> tuple[tuple, dict]:
        return self.args, self.kwargs

    def default_label(self) -> str:
        return _name_of(self.fn, "function")

    def instantiate(self, args: tuple, kwargs: dict, *, host: str) -> NodeInstance:
        return _FunctionInstance(self.fn, args, kwargs)

    def __repr__(self) -> str:
        return f"FunctionNode({_name_of(self.fn, repr(self.fn))})"


class _FunctionInstance(NodeInstance):
    has_main = True

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self._fn, self._args, self._kwargs = fn, args, kwargs

    def main(self) -> Any:
        return self._fn(*self._args, **self._kwargs)


class ServiceNode(Node):
    """Constructs ``constructor(*args, **kwargs)`` and serves its public methods.

    If the object has a ``run()`` method it is started after construction; if
    it has ``stop()``, that is called when the program shuts down.
    """

    handle_kind = "service"

    def __init__(self, constructor: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        _check_callable("ServiceNode", "constructor", constructor)
        self.constructor = constructor
        self.args = args
        self.kwargs = kwargs

    @property
    def arguments(self) -> tuple[tuple, dict]:
        return self.args, self.kwargs

    def default_label(self) -> str:
        return _name_of(self.constructor, "service")

    def instantiate(self, args: tuple, kwargs: dict, *, host: str) -> NodeInstance:
        return _ServiceInstance(self.constructor(*args, **kwargs))

    def __repr__(self) -> str:
        return f"ServiceNode({_name_of(self.constructor, repr(self.constructor))})"


class LocalServiceNode(ServiceNode):
    """A ``ServiceNode`` whose clients must share the object itself (locks, waits, big buffers).

    Its handles dereference to the object, as every service's do under the
    threads launcher; no launcher that puts nodes in other processes can run it,
    and asking for one is an error that says ``why`` (what to do instead).
    """

    launchers = ("threads",)

    def __init__(self, why: str, constructor: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(constructor, *args, **kwargs)
        self.why = why

    def __repr__(self) -> str:
        return f"LocalServiceNode({_name_of(self.constructor, repr(self.constructor))})"


class _ServiceInstance(NodeInstance):
    def __init__(self, obj: Any) -> None:
        self.target = obj
        self.has_main = callable(getattr(obj, "run", None))

    def main(self) -> Any:
        return self.target.run() if self.has_main else None

    def stop(self) -> None:
        stop = getattr(self.target, "stop", None)
        if callable(stop):
            stop()


class ReverbNode(Node):
    """A reverb replay server; handles to it dereference to ``"host:port"``.

    Builds ``reverb.Server(tables=table_factory(), port=port, checkpointer=...)``
    with a ``reverb.checkpointers.DefaultCheckpointer(checkpoint_dir,
    fallback_checkpoint_path=...)`` when ``checkpoint_dir`` is given: the server
    loads the newest checkpoint under ``checkpoint_dir``, or if there is none the
    checkpoint at ``fallback_checkpoint_path``. Without ``checkpoint_dir`` the
    server has no checkpointer (not reverb's temporary directory; see
    ``launch.reverb_server``). ``reverb`` is imported only when the node is
    instantiated.

    reverb listens on every interface; when the node's host is a loopback
    address (the threads launcher, a local Ray instance) the server is
    confined to the loopback device (see ``launch.network``).
    """

    handle_kind = "address"

    def __init__(
        self,
        table_factory: Callable[[], Sequence[Any]],
        checkpoint_dir: str | None = None,
        port: int | None = None,
        fallback_checkpoint_path: str | None = None,
    ) -> None:
        _check_callable("ReverbNode", "table_factory", table_factory)
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise ValueError(f"ReverbNode port must be in 1..65535 or None, got {port!r}")
        self.table_factory = table_factory
        if fallback_checkpoint_path is not None and checkpoint_dir is None:
            raise ValueError("ReverbNode fallback_checkpoint_path needs a checkpoint_dir to write new checkpoints to")
        self.checkpoint_dir = checkpoint_dir
        self.port = port
        self.fallback_checkpoint_path = fallback_checkpoint_path

    def default_label(self) -> str:
        return "reverb"

    def with_port(self, port: int) -> "ReverbNode":
        """A copy of this node serving on ``port``."""
        return ReverbNode(self.table_factory, self.checkpoint_dir, port, self.fallback_checkpoint_path)

    def instantiate(self, args: tuple, kwargs: dict, *, host: str) -> NodeInstance:
        import reverb  # heavy: imports TF

        checkpointer = None
        if self.checkpoint_dir is not None:
            checkpointer = reverb.checkpointers.DefaultCheckpointer(
                path=str(self.checkpoint_dir), fallback_checkpoint_path=self.fallback_checkpoint_path
            )
        server = start_reverb_server(self.table_factory(), self.port, checkpointer)
        if network.is_loopback(host):  # Only this machine's nodes use it: close it to others.
            network.confine_server(server)
        return _ReverbInstance(server, host)

    def __repr__(self) -> str:
        return f"ReverbNode(port={self.port})"


class _ReverbInstance(NodeInstance):
    def __init__(self, server: Any, host: str) -> None:
        self._server = server
        self.address = f"{host}:{server.port}"

    def stop(self) -> None:
        self._server.stop()
