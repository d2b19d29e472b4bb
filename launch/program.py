"""Program: the graph of nodes, their labels, groups and construction order."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from typing import Iterator, Mapping

from launch.config import Resources, RestartPolicy
from launch.errors import GraphError
from launch.handles import Handle, find_handles
from launch.nodes import Node

_program_ids = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """A node as placed in a program, with its effective configuration."""

    label: str
    node: Node
    handle: Handle
    group: str | None
    terminal: bool
    resources: Resources
    restart: RestartPolicy


@dataclasses.dataclass(frozen=True)
class _Group:
    name: str
    resources: Resources | None
    restart: RestartPolicy | None


class Program:
    """A set of labelled nodes that reference each other through handles."""

    def __init__(self, name: str = "program") -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"program name must be a non-empty string, got {name!r}")
        self.name = name
        self._id = next(_program_ids)
        self._specs: dict[str, NodeSpec] = {}
        self._group_stack: list[_Group] = []
        self._group_counts: dict[str, int] = {}

    # ----------------------------------------------------------------- building

    def add_node(
        self,
        node: Node,
        label: str | None = None,
        terminal: bool = False,
        *,
        resources: Resources | None = None,
        restart: RestartPolicy | None = None,
    ) -> Handle:
        """Adds ``node`` and returns its handle.

        Args:
          node: a ``FunctionNode``, ``ServiceNode`` or ``ReverbNode``.
          label: unique label. Inside ``group("g")`` it becomes ``"g/<label>"``,
            and a missing label becomes ``"g_<i>"`` (i = 0, 1, ...). Outside a
            group a missing label is derived from the function/class name.
          terminal: the program ends when all terminal nodes have finished.
          resources: overrides the enclosing group's resources.
          restart: overrides the enclosing group's restart policy.
        """
        if not isinstance(node, Node):
            raise TypeError(f"add_node expects a launch node, got {node!r}")
        if resources is not None and not isinstance(resources, Resources):
            raise TypeError(f"resources must be a launch.Resources, got {resources!r}")
        if restart is not None and not isinstance(restart, RestartPolicy):
            raise TypeError(f"restart must be a launch.RestartPolicy, got {restart!r}")
        if label is not None and (not isinstance(label, str) or not label):
            raise ValueError(f"label must be a non-empty string, got {label!r}")
        if any(spec.node is node for spec in self._specs.values()):
            raise GraphError(f"{node!r} was already added to program {self.name!r}")
        if terminal and node.handle_kind == "address":
            raise GraphError(f"{node!r} cannot be terminal: it never finishes by itself")

        group = self._group_stack[-1] if self._group_stack else None
        label = self._make_label(node, label, group)
        resources = resources or self._inherited("resources") or Resources()
        restart = restart or self._inherited("restart") or RestartPolicy()
        handle = Handle(label, self._id, self.name)
        spec = NodeSpec(
            label=label,
            node=node,
            handle=handle,
            group=group.name if group else None,
            terminal=bool(terminal),
            resources=resources,
            restart=restart,
        )
        self._check_references(spec)  # Early check; repeated at launch.
        self._specs[label] = spec
        return handle

    @contextlib.contextmanager
    def group(
        self, name: str, *, resources: Resources | None = None, restart: RestartPolicy | None = None
    ) -> Iterator[None]:
        """Context manager: nodes added inside are labelled and configured as a group.

        Groups nest (``"outer/inner"``); ``resources``/``restart`` become the
        defaults of the nodes added inside.
        """
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"group name must be a non-empty string without '/', got {name!r}")
        if resources is not None and not isinstance(resources, Resources):
            raise TypeError(f"resources must be a launch.Resources, got {resources!r}")
        if restart is not None and not isinstance(restart, RestartPolicy):
            raise TypeError(f"restart must be a launch.RestartPolicy, got {restart!r}")
        parent = self._group_stack[-1].name + "/" if self._group_stack else ""
        self._group_stack.append(_Group(parent + name, resources, restart))
        try:
            yield
        finally:
            self._group_stack.pop()

    def _inherited(self, field: str):
        for group in reversed(self._group_stack):
            value = getattr(group, field)
            if value is not None:
                return value
        return None

    def _make_label(self, node: Node, label: str | None, group: _Group | None) -> str:
        if group is not None:
            if label is not None:
                label = f"{group.name}/{label}"
            else:
                while True:
                    index = self._group_counts.get(group.name, 0)
                    self._group_counts[group.name] = index + 1
                    label = f"{group.name}_{index}"
                    if label not in self._specs:
                        break
        elif label is None:
            base = node.default_label()
            label = base
            for i in itertools.count(1):
                if label not in self._specs:
                    break
                label = f"{base}_{i}"
        if label in self._specs:
            raise GraphError(f"duplicate label {label!r} in program {self.name!r}")
        return label

    # ---------------------------------------------------------------- inspecting

    @property
    def nodes(self) -> tuple[NodeSpec, ...]:
        """All nodes, in the order they were added."""
        return tuple(self._specs.values())

    @property
    def labels(self) -> tuple[str, ...]:
        """All labels, in the order the nodes were added."""
        return tuple(self._specs)

    @property
    def groups(self) -> dict[str, tuple[str, ...]]:
        """Group name -> labels of the nodes directly in that group."""
        result: dict[str, list[str]] = {}
        for spec in self._specs.values():
            if spec.group is not None:
                result.setdefault(spec.group, []).append(spec.label)
        return {name: tuple(labels) for name, labels in result.items()}

    @property
    def terminal_labels(self) -> tuple[str, ...]:
        """Labels of the nodes marked ``terminal=True``."""
        return tuple(spec.label for spec in self._specs.values() if spec.terminal)

    def get(self, label_or_handle: str | Handle) -> NodeSpec:
        """The ``NodeSpec`` for a label or handle (``GraphError`` if unknown)."""
        label = self._label_of(label_or_handle)
        return self._specs[label]

    def __contains__(self, item: object) -> bool:
        try:
            self._label_of(item)  # type: ignore[arg-type]
        except (GraphError, TypeError):
            return False
        return True

    def __len__(self) -> int:
        return len(self._specs)

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(self.nodes)

    def __repr__(self) -> str:
        return f"Program({self.name!r}, nodes={list(self._specs)})"

    def _label_of(self, item: str | Handle) -> str:
        if isinstance(item, Handle):
            if item._program_id != self._id or item.label not in self._specs:
                raise GraphError(f"{item!r} is not a node of program {self.name!r}")
            return item.label
        if isinstance(item, str):
            if item not in self._specs:
                raise GraphError(f"no node labelled {item!r} in program {self.name!r}")
            return item
        raise TypeError(f"expected a label or a Handle, got {item!r}")

    # ---------------------------------------------------------------- validation

    def _check_references(self, spec: NodeSpec) -> list[str]:
        """Labels ``spec`` depends on; raises GraphError for bad handles."""
        deps: list[str] = []
        for handle in find_handles(spec.node.arguments):
            known = handle._program_id == self._id and (handle.label in self._specs or handle.label == spec.label)
            if not known:
                raise GraphError(
                    f"node {spec.label!r} refers to {handle!r}, which is not a node of program {self.name!r}"
                )
            if handle.label == spec.label:
                target = spec
            else:
                target = self._specs[handle.label]
            if target.node.handle_kind is None:
                raise GraphError(
                    f"node {spec.label!r} refers to {handle!r}, but {target.node!r} "
                    "cannot be referenced (only service and reverb nodes can)"
                )
            if handle.label not in deps:
                deps.append(handle.label)
        return deps

    def dependencies(self, label_or_handle: str | Handle) -> tuple[str, ...]:
        """Labels of the nodes whose handles appear in this node's arguments."""
        return tuple(self._check_references(self.get(label_or_handle)))

    def construction_order(self) -> list[NodeSpec]:
        """Validates the graph; returns the nodes, dependencies first.

        Raises:
          GraphError: a handle to a node outside the program, a reference to a
            node that cannot be referenced, or a dependency cycle.
        """
        deps = {label: self._check_references(spec) for label, spec in self._specs.items()}
        order: list[NodeSpec] = []
        state: dict[str, int] = {}  # 1 = on the DFS path, 2 = done.
        path: list[str] = []

        def visit(label: str) -> None:
            if state.get(label) == 2:
                return
            if state.get(label) == 1:
                cycle = path[path.index(label) :] + [label]
                raise GraphError(
                    f"construction dependency cycle in program {self.name!r}: " + " -> ".join(repr(x) for x in cycle)
                )
            state[label] = 1
            path.append(label)
            for dep in deps[label]:
                visit(dep)
            path.pop()
            state[label] = 2
            order.append(self._specs[label])

        for label in self._specs:
            visit(label)
        return order

    def completion_labels(self, has_main: Mapping[str, bool]) -> set[str]:
        """Labels whose completion ends the program.

        The terminal nodes if any are marked, else every node with work to do
        (functions and services with ``run()``), as given by ``has_main``.
        """
        terminal = self.terminal_labels
        if not terminal:
            return {label for label, busy in has_main.items() if busy}
        idle = [label for label in terminal if not has_main.get(label, False)]
        if idle:
            raise GraphError(f"terminal nodes {idle} have no run() method, so they never finish")
        return set(terminal)
