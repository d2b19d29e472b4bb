"""A pytree's structure as plain JSON data, so that reading a checkpoint never runs code.

``encode(tree)`` returns ``(structure, leaves)``: ``structure`` is made of
JSON dicts, lists, strings and integers only, and ``leaves`` are the tree's
leaves in the order the structure numbers them. ``decode(structure, leaves)``
rebuilds the tree. The containers a checkpoint may hold:

- ``{"dict": [[key, node], ...]}`` for dicts with string or integer keys (order kept), and
  ``{"ordered_dict": [[key, node], ...]}`` for ``collections.OrderedDict`` (dm_control's observations);
- ``{"list": [node, ...]}`` and ``{"tuple": [node, ...]}``;
- ``{"namedtuple": "module:QualName", "fields": [...], "children": [node, ...]}``
  for NamedTuples (learner states, optax states);
- ``{"none": null}`` for ``None`` and ``{"leaf": i}`` for the i-th leaf.

Decoding imports nothing: a NamedTuple class is looked up in modules this
process has already imported (the learner's own module, optax), and must
still have the stored fields. Anything unexpected in the data raises
``StructureError`` saying what was found.
"""

from __future__ import annotations

import collections
import sys
from typing import Any, Sequence

import numpy as np

_SCALARS = (bool, int, float, complex, np.generic, np.ndarray)
_MAPPING_KINDS = {dict: "dict", collections.OrderedDict: "ordered_dict"}
_MAPPING_TYPES = {kind: mapping_type for mapping_type, kind in _MAPPING_KINDS.items()}


class StructureError(ValueError):
    """A tree structure could not be encoded, or stored structure data is malformed."""


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)


def _is_leaf(value: Any) -> bool:
    # jax arrays are not imported here: anything with a shape and dtype that is not a container is a leaf.
    return isinstance(value, _SCALARS) or (hasattr(value, "shape") and hasattr(value, "dtype"))


def encode(tree: Any) -> tuple[dict, list]:
    """Returns ``(structure, leaves)`` of ``tree`` (see the module docstring).

    Raises ``StructureError`` for containers other than dict, OrderedDict, list,
    tuple, NamedTuple and None, and for dict keys other than strings and integers.
    """
    leaves: list = []

    def visit(node: Any, path: str) -> dict:
        if node is None:
            return {"none": None}
        mapping_kind = _MAPPING_KINDS.get(type(node))  # exact types: a subclass would not come back as such
        if mapping_kind is not None:
            items = []
            for key, child in node.items():
                if isinstance(key, bool) or not isinstance(key, (str, int)):
                    raise StructureError(
                        f"Key {key!r} at {path or 'the root'} is a {type(key).__name__}; checkpoints accept dict "
                        "keys that are strings or integers."
                    )
                items.append([key, visit(child, f"{path}[{key!r}]")])
            return {mapping_kind: items}
        if _is_namedtuple(node):
            cls = type(node)
            if _lookup(cls.__module__, cls.__qualname__) is not cls:
                raise StructureError(
                    f"{cls.__qualname__} at {path or 'the root'} cannot be found again by its name (defined inside "
                    "a function?); checkpoints accept NamedTuples defined at module level."
                )
            return {
                "namedtuple": f"{cls.__module__}:{cls.__qualname__}",
                "fields": list(cls._fields),
                "children": [visit(child, f"{path}.{name}") for name, child in zip(cls._fields, node)],
            }
        if type(node) in (list, tuple):
            kind = type(node).__name__
            return {kind: [visit(child, f"{path}[{i}]") for i, child in enumerate(node)]}
        if _is_leaf(node):
            leaves.append(node)
            return {"leaf": len(leaves) - 1}
        raise StructureError(
            f"{type(node).__name__} at {path or 'the root'} is not a container a checkpoint can hold: use dicts, "
            "OrderedDicts, lists, tuples, module-level NamedTuples and None around numpy/jax arrays and python scalars."
        )

    return visit(tree, ""), leaves


def _lookup(module_name: str, qualname: str) -> Any:
    """The object named ``qualname`` in the already-imported module ``module_name``, or None."""
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def _find_namedtuple(name: Any, fields: Any) -> type:
    if not isinstance(name, str) or name.count(":") != 1:
        raise StructureError(f"A namedtuple node names {name!r}; expected 'module:QualName'.")
    module_name, qualname = name.split(":")
    if module_name not in sys.modules:
        raise StructureError(
            f"The structure holds a {qualname} of module {module_name}, which this process has not imported; "
            "loading never imports modules. Import the module that defines it (e.g. build the agent) first."
        )
    cls = _lookup(module_name, qualname)
    if not (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)):
        raise StructureError(f"{name} is not a NamedTuple class in this process.")
    if list(cls._fields) != fields:
        raise StructureError(
            f"{name} has fields {list(cls._fields)} in this process but {fields} in the stored structure; it was "
            "written by another version of the code."
        )
    return cls


def decode(structure: Any, leaves: Sequence[Any]) -> Any:
    """Rebuilds the tree ``encode`` described; every leaf must be used exactly once."""
    used = [False] * len(leaves)

    def visit(node: Any) -> Any:
        if not isinstance(node, dict) or len(node) not in (1, 3):
            raise StructureError(f"Malformed structure node {str(node)[:80]!r}.")
        if "leaf" in node and len(node) == 1:
            index = node["leaf"]
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(leaves) or used[index]:
                raise StructureError(f"Leaf index {index!r} is out of range or repeated ({len(leaves)} leaves stored).")
            used[index] = True
            return leaves[index]
        if node == {"none": None}:
            return None
        (kind,) = node if len(node) == 1 else (None,)
        if kind in _MAPPING_TYPES and isinstance(node[kind], list):
            result = _MAPPING_TYPES[kind]()
            for item in node[kind]:
                if not (
                    isinstance(item, list)
                    and len(item) == 2
                    and isinstance(item[0], (str, int))
                    and not isinstance(item[0], bool)
                ):
                    raise StructureError(f"Malformed {kind} item {str(item)[:80]!r}: expected [key, node].")
                result[item[0]] = visit(item[1])
            return result
        for kind, container in (("list", list), ("tuple", tuple)):
            if kind in node and len(node) == 1 and isinstance(node[kind], list):
                return container(visit(child) for child in node[kind])
        if set(node) == {"namedtuple", "fields", "children"} and isinstance(node["children"], list):
            cls = _find_namedtuple(node["namedtuple"], node["fields"])
            if len(node["children"]) != len(cls._fields):
                raise StructureError(f"{node['namedtuple']} has {len(node['children'])} children stored.")
            return cls(*(visit(child) for child in node["children"]))
        raise StructureError(f"Unknown structure node {str(node)[:80]!r}.")

    tree = visit(structure)
    if not all(used):
        raise StructureError(f"The structure uses {sum(used)} of the {len(leaves)} stored leaves.")
    return tree
