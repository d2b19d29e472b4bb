"""Handles: placeholders for nodes, replaced by real references at launch."""

from __future__ import annotations

import collections
from typing import Any, Callable


class Handle:
    """Refers to a node of a ``Program``.

    Handles are returned by ``Program.add_node`` and may be passed (also nested
    in lists, tuples, dicts and sets) to other nodes. At launch every handle is
    dereferenced: to the service object or a client proxy for service nodes, to
    the ``"host:port"`` address string for reverb nodes.
    """

    __slots__ = ("_label", "_program_id", "_program_name")

    def __init__(self, label: str, program_id: int, program_name: str) -> None:
        self._label = label
        self._program_id = program_id
        self._program_name = program_name

    @property
    def label(self) -> str:
        """Label of the node this handle refers to."""
        return self._label

    @property
    def program_name(self) -> str:
        """Name of the program the node belongs to."""
        return self._program_name

    def _key(self) -> tuple[int, str]:
        return (self._program_id, self._label)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Handle) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Handle({self._label!r}, program={self._program_name!r})"

    def __reduce__(self):
        return (Handle, (self._label, self._program_id, self._program_name))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"{self!r} is a placeholder for node {self._label!r}: it has no "
            f"attribute {name!r}. Pass the handle to another node; it is "
            f"replaced by the node's service/address when the program is launched."
        )


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def find_handles(structure: Any) -> list[Handle]:
    """Returns every handle inside ``structure`` (lists, tuples, dicts, sets)."""
    found: list[Handle] = []
    seen: set[int] = set()

    def visit(value: Any) -> None:
        if isinstance(value, Handle):
            found.append(value)
            return
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            if id(value) in seen:
                return
            seen.add(id(value))
            items = value.values() if isinstance(value, dict) else value
            if isinstance(value, dict):
                for key in value:
                    visit(key)
            for item in items:
                visit(item)

    visit(structure)
    return found


def map_handles(structure: Any, fn: Callable[[Handle], Any]) -> Any:
    """Returns a copy of ``structure`` with each handle ``h`` replaced by ``fn(h)``.

    Containers without handles are returned unchanged (not copied).
    """
    if not find_handles(structure):
        return structure
    return _map(structure, fn)


def _map(value: Any, fn: Callable[[Handle], Any]) -> Any:
    if isinstance(value, Handle):
        return fn(value)
    if not find_handles(value):
        return value
    if _is_namedtuple(value):
        return type(value)(*(_map(v, fn) for v in value))
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_map(v, fn) for v in value]
        try:
            return type(value)(items)
        except TypeError:
            return (list if isinstance(value, list) else tuple)(items)
    if isinstance(value, dict):
        pairs = [(_map(k, fn), _map(v, fn)) for k, v in value.items()]
        if isinstance(value, collections.defaultdict):
            result = collections.defaultdict(value.default_factory)
            result.update(pairs)
            return result
        try:
            return type(value)(pairs)
        except TypeError:
            return dict(pairs)
    return value
