"""Client proxies that handles to service nodes dereference to under Ray."""

from __future__ import annotations

from typing import Any, Sequence


class _RemoteMethod:
    """``proxy.method``: calling it does a blocking remote call."""

    __slots__ = ("_actor", "_name", "_blocking")

    def __init__(self, actor: Any, name: str, blocking: bool) -> None:
        self._actor = actor
        self._name = name
        self._blocking = blocking

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ref = self._actor.call.remote(self._name, args, kwargs)
        if not self._blocking:
            return ref
        import ray

        return ray.get(ref)


class _Futures:
    """``proxy.futures.method(...)`` returns a Ray ObjectRef instead of blocking."""

    __slots__ = ("_proxy",)

    def __init__(self, proxy: "ServiceProxy") -> None:
        self._proxy = proxy

    def __getattr__(self, name: str) -> _RemoteMethod:
        self._proxy._check(name)
        return _RemoteMethod(self._proxy._actor, name, blocking=False)

    def __dir__(self) -> list[str]:
        return list(self._proxy._methods)


class ServiceProxy:
    """Calls the public methods of a service node running in a Ray actor.

    ``proxy.m(*a, **kw)`` blocks and returns the result (exceptions raised by
    the service are re-raised); ``proxy.futures.m(*a, **kw)`` returns an
    ObjectRef (use ``ray.get``). Proxies are picklable, so they can be passed
    to other Ray actors and tasks.
    """

    __slots__ = ("_label", "_actor", "_methods")

    def __init__(self, label: str, actor: Any, methods: Sequence[str]) -> None:
        self._label = label
        self._actor = actor
        self._methods = tuple(methods)

    def _check(self, name: str) -> None:
        if name not in self._methods:
            raise AttributeError(
                f"service node {self._label!r} has no public method {name!r}; "
                f"available: {', '.join(self._methods) or '(none)'}"
            )

    def __getattr__(self, name: str) -> _RemoteMethod:
        if name.startswith("__"):
            raise AttributeError(name)
        self._check(name)
        return _RemoteMethod(self._actor, name, blocking=True)

    @property
    def futures(self) -> _Futures:
        """Non-blocking view: ``proxy.futures.m(...)`` returns an ObjectRef."""
        return _Futures(self)

    def __dir__(self) -> list[str]:
        return list(self._methods) + ["futures"]

    def __repr__(self) -> str:
        return f"ServiceProxy({self._label!r})"

    def __reduce__(self):
        return (ServiceProxy, (self._label, self._actor, self._methods))
