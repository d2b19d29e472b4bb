"""The generic Ray actor that hosts one node (runs inside Ray workers)."""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any

from launch import context
from launch._ray_proxy import ServiceProxy
from launch.config import CORES_VARIABLE, pin_process
from launch.handles import map_handles
from launch.nodes import Node, NodeInstance


class NodeActor:
    """Builds a node in the worker process and exposes it to the launcher.

    Wrapped with ``ray.remote`` by the Ray launcher. Errors in user code are
    caught and returned as traceback text so that Ray never retries them;
    only a dead process makes Ray restart the actor (re-running ``__init__``)
    and retry the in-flight ``main()``.
    """

    def __init__(self, label: str, node: Node, dependencies: dict[str, tuple[str, Any, Any]]) -> None:
        """Builds the node.

        Args:
          label: the node's label.
          node: the node description (its arguments may contain handles).
          dependencies: label -> (handle kind, actor handle, ObjectRef of that
            actor's ``ready()``) for every node this one refers to. All actors
            are created at once; each constructor waits here for the nodes it
            depends on, so independent nodes start in parallel.
        """
        self._label = label
        self._stop = threading.Event()
        context._activate(self._stop)
        self._instance: NodeInstance | None = None
        self._init_error: str | None = None
        self._dependency_failed: str | None = None
        self._methods: tuple[str, ...] = ()
        cores = os.environ.get(CORES_VARIABLE)
        if cores:  # before the node starts threads of its own (they inherit the pinning)
            try:
                pin_process(tuple(int(core) for core in cores.split(",")))
            except ValueError as error:
                self._init_error = f"node {label!r}: {error}"
                return
        import ray

        values: dict[str, Any] = {}
        for dep, (kind, actor, ready_ref) in dependencies.items():
            try:
                info = ray.get(ready_ref)
                failed = info["error"] is not None
            except Exception:
                failed = True
            if failed:
                self._dependency_failed = dep
                self._init_error = f"node {dep!r}, which node {label!r} depends on, failed"
                return
            if kind == "service":
                values[dep] = ServiceProxy(dep, actor, info["methods"])
            else:
                values[dep] = info["address"]
        try:
            args, kwargs = map_handles(node.arguments, lambda h: values[h.label])
            host = ray.util.get_node_ip_address()
            self._instance = node.instantiate(args, kwargs, host=host)
            self._methods = tuple(self._instance.public_methods())
        except Exception:
            self._init_error = traceback.format_exc()

    def ready(self) -> dict[str, Any]:
        """Construction result: error text, public methods, address, pid."""
        instance = self._instance
        return {
            "error": self._init_error,
            "dependency_failed": self._dependency_failed,
            "methods": list(self._methods),
            "address": instance.address if instance else None,
            "has_main": bool(instance and instance.has_main),
            "pid": os.getpid(),
        }

    def main(self) -> tuple[str, str | None]:
        """Runs the node's work; nodes without work wait until stopped."""
        if self._instance is None:
            return ("error", self._init_error)
        if not self._instance.has_main:
            self._stop.wait()
            return ("idle", None)
        try:
            value = self._instance.main()
        except BaseException:
            return ("error", traceback.format_exc())
        return ("done", value)

    def call(self, method: str, args: tuple, kwargs: dict) -> Any:
        """Calls a public method of the service object."""
        instance = self._instance
        if instance is None or instance.target is None:
            raise RuntimeError(f"node {self._label!r} has no service object to call {method!r} on")
        if method not in self._methods:
            raise AttributeError(
                f"service node {self._label!r} has no public method {method!r}; "
                f"available: {', '.join(self._methods) or '(none)'}"
            )
        return getattr(instance.target, method)(*args, **kwargs)

    def stop(self) -> str | None:
        """Sets the stop event and calls the node's ``stop()``; returns error text."""
        self._stop.set()
        if self._instance is None:
            return None
        try:
            self._instance.stop()
        except Exception:
            return traceback.format_exc()
        return None
