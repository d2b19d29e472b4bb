"""Where a learner runs and how its state and batches are laid out over its devices, by configuration.

``LearnerSharding`` names the learner's devices (a count or device ids) and a strategy:

- ``replicated``: the state and the batch whole on every device (one device: today's learner);
- ``data``: the batch split over the mesh axis ``"data"``, the state replicated; XLA reduces the gradients;
- ``fsdp``: the batch split as with ``data``, and each parameter and optimiser-state leaf split over the same axis
  along its largest dimension that the axis divides (leaves it divides nowhere stay replicated);
- ``rules``: an ordered list of ``(path pattern, PartitionSpec)`` over a 2-D ``("data", "model")`` mesh, for
  tensor-parallel layers: the first pattern that matches a leaf's path (``re.search`` over its names joined by
  ``/``, e.g. ``params/mlp/~/linear_0/w``) gives its spec; leaves no rule matches are replicated, and a rule that
  matches no leaf is refused.

No network or loss changes: ``SGDLearner`` jits the agent's update with these shardings on a ``jax.sharding.Mesh``
(``jax.jit`` and ``NamedSharding``, no ``pmap``), puts each batch in place before the call, and gathers metrics
and priorities back.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import re
from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from acme.jax.multiprocess import spans_processes

STRATEGIES = ("replicated", "data", "fsdp", "rules")
AXES = ("data", "model")


def leaf_path(path: Sequence[Any]) -> str:
    """A leaf's path as its keys' names joined by ``/`` (``params/mlp/~/linear_0/w``)."""
    names = []
    for key in path:
        for attribute in ("name", "key", "idx"):
            if hasattr(key, attribute):
                names.append(str(getattr(key, attribute)))
                break
        else:
            names.append(str(key))
    return "/".join(names)


@dataclasses.dataclass(frozen=True)
class LearnerSharding:
    """The learner's devices and how its state and batches are laid out over them (see the module docstring).

    Attributes:
      strategy: ``replicated``, ``data``, ``fsdp`` or ``rules``.
      devices: how many devices (the first of ``jax.devices()``), or which (their ids); None: one for
        ``replicated``, every device otherwise.
      rules: with ``rules`` only: ``(pattern, spec)`` pairs, ``spec`` a tuple of mesh axis names (or None) per
        dimension, e.g. ``("w$", (None, "model"))``.
      model_axis: with ``rules``: the size of the ``"model"`` axis; the ``"data"`` axis gets the other devices.
    """

    strategy: str = "replicated"
    devices: int | tuple[int, ...] | None = None
    rules: tuple[tuple[str, tuple[str | None, ...]], ...] = ()
    model_axis: int = 1

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"sharding strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}.")
        devices = self.devices
        if isinstance(devices, numbers.Integral) and not isinstance(devices, bool):
            if devices < 1:
                raise ValueError(f"devices must be a count >= 1 or a tuple of device ids, got {devices!r}.")
        elif devices is not None:
            if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
                raise ValueError(f"devices must be a count >= 1 or a tuple of device ids, got {devices!r}.")
            ids = tuple(devices)
            if (
                not ids
                or len(set(ids)) != len(ids)
                or not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) and i >= 0 for i in ids)
            ):
                raise ValueError(f"devices must be distinct device ids >= 0 (at least one), got {devices!r}.")
            object.__setattr__(self, "devices", tuple(int(i) for i in ids))
        if self.rules and self.strategy != "rules":
            raise ValueError(f"rules are for strategy 'rules', not {self.strategy!r}; leave them out.")
        if self.strategy == "rules" and not self.rules:
            raise ValueError("strategy 'rules' needs rules: (path pattern, PartitionSpec axes) pairs.")
        rules = []
        for rule in self.rules:
            if not (isinstance(rule, (tuple, list)) and len(rule) == 2 and isinstance(rule[0], str)):
                raise ValueError(f"each rule must be (path pattern, spec), got {rule!r}.")
            pattern, spec = rule[0], tuple(rule[1])
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"rule pattern {pattern!r} is not a regular expression: {error}.") from None
            if not all(axis is None or axis in AXES for axis in spec):
                raise ValueError(f"rule {pattern!r}: each axis must be one of {AXES} or None, got {spec!r}.")
            rules.append((pattern, spec))
        object.__setattr__(self, "rules", tuple(rules))
        if (
            isinstance(self.model_axis, bool)
            or not isinstance(self.model_axis, numbers.Integral)
            or self.model_axis < 1
        ):
            raise ValueError(f"model_axis must be an integer >= 1, got {self.model_axis!r}.")
        if self.model_axis > 1 and self.strategy != "rules":
            raise ValueError(f"model_axis is for strategy 'rules', not {self.strategy!r}.")

    def device_list(self) -> list:
        """The devices the learner runs on; refuses more devices, or ids, than this process has."""
        available = jax.devices()
        if self.devices is None:
            return available[:1] if self.strategy == "replicated" else list(available)
        if isinstance(self.devices, tuple):
            return [device_of(i) for i in self.devices]
        if self.devices > len(available):
            raise ValueError(
                f"devices={self.devices} is more than the {len(available)} this process has "
                f"({available[0].platform}); give at most {len(available)}."
            )
        return available[: self.devices]

    def mesh(self) -> Mesh:
        """The mesh: one ``"data"`` axis, or ``("data", "model")`` for ``rules``."""
        devices = self.device_list()
        if self.strategy == "rules":
            if len(devices) % self.model_axis:
                raise ValueError(f"model_axis={self.model_axis} does not divide the {len(devices)} devices.")
            return Mesh(np.array(devices).reshape(len(devices) // self.model_axis, self.model_axis), AXES)
        return Mesh(np.array(devices), ("data",))


class Layout:
    """A ``LearnerSharding`` applied to one learner: its mesh, and the shardings of its state and batches."""

    def __init__(self, sharding: LearnerSharding, state: Any):
        self.sharding = sharding
        self.mesh = sharding.mesh()
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self.data_size = self.mesh.shape["data"]
        self.state = self._state_shardings(state)
        # Over several processes (acme.jax.multiprocess) each feeds the batch rows of its own devices along the
        # data axis: a block of local_data_size consecutive positions, the block_index-th.
        self.multiprocess = spans_processes(self.mesh)
        along_data = self.mesh.devices.reshape(self.data_size, -1)[:, 0]
        here = [i for i, device in enumerate(along_data) if device.process_index == jax.process_index()]
        self.local_data_size = len(here) if self.multiprocess else self.data_size
        self.block_index = here[0] // self.local_data_size if here else 0
        if self.multiprocess and here != list(range(here[0], here[0] + len(here))):
            raise ValueError("this process's devices are not consecutive along the mesh's data axis.")

    def _state_shardings(self, state: Any) -> Any:
        strategy = self.sharding.strategy
        if strategy in ("replicated", "data"):
            return jax.tree.map(lambda _: self.replicated, state)
        leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
        if strategy == "fsdp":
            specs = [self._fsdp_spec(np.shape(leaf)) for _, leaf in leaves]
        else:
            specs = self._rule_specs(leaves)
        return jax.tree_util.tree_unflatten(treedef, [NamedSharding(self.mesh, spec) for spec in specs])

    def _fsdp_spec(self, shape: tuple) -> PartitionSpec:
        """Split over ``"data"`` along the largest dimension it divides; replicated where it divides none."""
        candidates = [(size, axis) for axis, size in enumerate(shape) if size % self.data_size == 0 and size > 1]
        if not candidates or self.data_size == 1:
            return PartitionSpec()
        _, axis = max(candidates)
        return PartitionSpec(*(["data" if i == axis else None for i in range(len(shape))]))

    def _rule_specs(self, leaves: list) -> list:
        used = set()
        specs = []
        for path, leaf in leaves:
            name, shape = leaf_path(path), np.shape(leaf)
            spec = PartitionSpec()
            for index, (pattern, axes) in enumerate(self.sharding.rules):
                if re.search(pattern, name):
                    used.add(index)
                    if len(axes) > len(shape):
                        raise ValueError(f"rule {pattern!r} gives {len(axes)} axes to {name}, which has shape {shape}.")
                    for size, axis in zip(shape, axes):
                        if axis is not None and size % self.mesh.shape[axis]:
                            raise ValueError(
                                f"rule {pattern!r} splits {name} (shape {shape}) over {axis!r} of size "
                                f"{self.mesh.shape[axis]}, which does not divide {size}."
                            )
                    spec = PartitionSpec(*axes)
                    break
            specs.append(spec)
        unused = [self.sharding.rules[i][0] for i in range(len(self.sharding.rules)) if i not in used]
        if unused:
            paths = ", ".join(leaf_path(path) for path, _ in leaves[:8])
            raise ValueError(f"rules {unused} match no leaf of the learner state (its paths: {paths}, ...).")
        return specs

    def batch(self, batch: Any, stacked: bool) -> Any:
        """The shardings of a batch: split over ``"data"`` along its batch dimension (the second of ``[U, B]``
        stacks); refuses a batch the data axis does not divide. Over several processes ``batch`` is this
        process's rows, which its own devices of the data axis must divide."""
        axis = 1 if stacked else 0
        devices = self.local_data_size

        def spec(leaf):
            shape = np.shape(leaf)
            if len(shape) <= axis:
                return self.replicated
            if self.sharding.strategy == "replicated":
                return self.replicated
            if shape[axis] % devices:
                whose = "this process's " if self.multiprocess else ""
                raise ValueError(
                    f"a batch of {shape[axis]} does not split over {whose}{devices} devices of the data axis: use a "
                    f"batch size that {devices} divides, or other devices."
                )
            return NamedSharding(self.mesh, PartitionSpec(*([None] * axis + ["data"])))

        return jax.tree.map(spec, batch)

    def global_batch(self, batch: Any, shardings: Any) -> Any:
        """``batch`` placed in ``shardings`` (``batch(...)``'s): as it is in one process; over several, each
        process's rows joined into the global batch, in the order of the processes' blocks of the data axis."""
        if not self.multiprocess:
            return jax.device_put(batch, shardings)
        return jax.tree.map(jax.make_array_from_process_local_data, shardings, batch)

    def local_rows(self, values: np.ndarray, stacked: bool) -> np.ndarray:
        """This process's rows of per-row ``values`` of the global batch (e.g. the update's priorities; all of
        them in one process)."""
        if not self.multiprocess:
            return values
        axis = 1 if stacked else 0
        rows = values.shape[axis] // (self.data_size // self.local_data_size)
        return np.take(values, np.arange(self.block_index * rows, (self.block_index + 1) * rows), axis=axis)

    def fetch(self, tree: Any) -> Any:
        """``tree`` (in this layout) as host arrays; over several processes the leaves other processes hold
        parts of are gathered (one compiled program for the whole tree), which every process of the group must
        call together."""
        if not self.multiprocess:
            return jax.device_get(tree)
        whole = _replicate(self.replicated)(tree)
        return jax.tree.map(lambda leaf: np.asarray(leaf.addressable_data(0)), whole)


@functools.lru_cache(maxsize=None)
def _replicate(replicated: NamedSharding) -> Any:
    """A jitted identity whose outputs are ``replicated``: XLA gathers every split leaf in one program."""
    return jax.jit(lambda tree: tree, out_shardings=replicated)


def device_of(device_id: int | None) -> Any:
    """The jax device whose id is ``device_id`` (None for None); refuses an id this process does not have."""
    if device_id is None:
        return None
    by_id = {device.id: device for device in jax.devices()}
    if device_id not in by_id:
        raise ValueError(f"device {device_id} does not exist here; this process has ids {sorted(by_id)}.")
    return by_id[device_id]
