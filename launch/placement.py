"""Placement by configuration: one map from node labels or groups to the resources their nodes reserve.

    placement = {
        "learner": launch.Resources(num_gpus=1),
        "actor": launch.Resources(num_cpus=1, custom={"actor_host": 1}),  # every node of the "actor" group
    }
    launch.launch(program, launcher="ray", placement=placement)

The Ray launcher reserves these resources for each node, so Ray schedules it on a machine that has them
(custom resources name machines: ``ray start --resources '{"actor_host": 8}'``), and pins its process to
``cores`` where they are given (on a small machine, a learner on core 0 and actors on the others keep the
learner's XLA threads and the actors out of each other's way). Moving work between machines or cores is a
change of this map, not of the program or its nodes.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from launch.config import Resources
from launch.program import NodeSpec, Program

Placement = Mapping[str, Resources]


def _groups_of(spec: NodeSpec) -> list[str]:
    """The node's group and the groups enclosing it, innermost first (``"a/b"`` -> ``["a/b", "a"]``)."""
    if spec.group is None:
        return []
    parts = spec.group.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def check_placement(program: Program, placement: Placement) -> None:
    """Raises ``TypeError``/``ValueError`` unless every key names a node or a group of ``program`` and every
    value is a ``launch.Resources``."""
    if not isinstance(placement, Mapping):
        raise TypeError(f"placement must be a mapping of node labels or groups to launch.Resources, got {placement!r}")
    known = set(program.labels) | {group for spec in program.nodes for group in _groups_of(spec)}
    for key, resources in placement.items():
        if not isinstance(resources, Resources):
            raise TypeError(f"placement[{key!r}] must be a launch.Resources, got {resources!r}")
        if key not in known:
            raise ValueError(
                f"placement key {key!r} names no node or group of program {program.name!r}; its nodes and "
                f"groups are: {', '.join(sorted(known))}."
            )


def resolve_placement(program: Program, placement: Placement | None) -> dict[str, Resources]:
    """label -> the resources the node reserves: the placement entry of its own label, else of its innermost
    group that has one, else those it was added with."""
    placement = placement or {}
    check_placement(program, placement)
    resolved = {}
    for spec in program.nodes:
        keys = [spec.label, *_groups_of(spec)]
        resolved[spec.label] = next((placement[key] for key in keys if key in placement), spec.resources)
    return resolved


_RESOURCE_FIELDS = ("num_cpus", "num_gpus", "custom", "cores", "cpu_devices")


def placement_from_json(text: str) -> dict[str, Resources]:
    """A placement from JSON, e.g. ``{"actor": {"custom": {"actor_host": 1}}, "learner": {"cores": [0]}}``."""
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"placement is not valid JSON ({error}): {text!r}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"placement must be a JSON object of node labels or groups to resources, got {text!r}")
    placement = {}
    for key, fields in raw.items():
        if not isinstance(fields, dict) or not set(fields) <= set(_RESOURCE_FIELDS):
            raise ValueError(
                f"placement[{key!r}] must be an object with some of the fields {', '.join(_RESOURCE_FIELDS)}, "
                f"got {fields!r}"
            )
        placement[key] = Resources(**fields)
    return placement
