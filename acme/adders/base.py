"""The adder interface, backend-free: ``Adder``, the ``Step`` it stores, priority functions and table signatures.

An *adder* sits between an actor and a replay buffer. The actor reports what
happened in the environment (``add_first`` at the start of an episode, then
``add`` once per environment step) and the adder turns that stream of
timesteps into replay items: n-step transitions, fixed-length sequences or
whole episodes. The adders that write through a trajectory writer (reverb's,
or the local replay's with the same meaning) share ``acme.adders.writer``.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Mapping, NamedTuple

import dm_env
import numpy as np
import tree

from acme import types
from acme.replay.tables import LeafSpec

# A priority function receives the item it is asked about, as numpy arrays in
# the item's own structure (a ``Transition`` or a ``Step`` with a time
# dimension), and returns the item's priority in that table.
PriorityFn = Callable[[Any], float]
PriorityFns = Mapping[str, PriorityFn | None]


class Step(NamedTuple):
    """One environment step, as stored by the sequence and episode adders.

    Step ``t`` of an episode holds the observation ``o_t``, the action ``a_t``
    the agent took there, the reward ``r_{t+1}`` and environment discount
    ``d_{t+1}`` of the timestep that action led to, ``start_of_episode``
    (true only for ``t == 0``) and the agent's ``extras`` for ``a_t`` (e.g.
    policy logits or a recurrent state).

    The final timestep of an episode becomes a step of its own: its
    observation, with zero action, reward, discount and extras. Padding steps
    are all zeros (``start_of_episode`` false).
    """

    observation: types.NestedArray
    action: types.NestedArray
    reward: types.NestedArray
    discount: types.NestedArray
    start_of_episode: types.NestedArray
    extras: types.NestedArray = ()


class Adder(abc.ABC):
    """Receives an actor's experience, one timestep at a time.

    The calls for one episode are ``add_first(first_timestep)`` followed by one
    ``add(action, next_timestep, extras)`` per environment step; the episode
    ends with the ``add`` whose ``next_timestep.last()`` is true. ``reset``
    abandons an unfinished episode.
    """

    @abc.abstractmethod
    def add_first(self, timestep: dm_env.TimeStep) -> None:
        """Records the first timestep of an episode (``timestep.first()``)."""

    @abc.abstractmethod
    def add(
        self,
        action: types.NestedArray,
        next_timestep: dm_env.TimeStep,
        extras: types.NestedArray = (),
    ) -> None:
        """Records the action taken and the timestep it led to.

        ``extras`` is a nest of arrays produced with the action (for example
        the policy's logits); it must keep the same structure within a replay
        table.
        """

    @abc.abstractmethod
    def reset(self) -> None:
        """Drops any state of a partially recorded episode."""


def check_positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Returns ``value`` as an int, or raises a ValueError naming the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r} (of type {type(value).__name__}).")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}.")
    return int(value)


def check_priority_fns(priority_fns: Any) -> dict[str, PriorityFn | None]:
    """Validates a table-name -> priority function mapping and copies it."""
    if not isinstance(priority_fns, Mapping):
        raise ValueError(
            "priority_fns must be a mapping from replay table name to a priority "
            "function (or None for priority 1.0), e.g. {'replay': None}; "
            f"got {priority_fns!r}."
        )
    if not priority_fns:
        raise ValueError(
            "priority_fns is empty, so the adder would write to no table. Pass at "
            "least one table name, e.g. {'replay': None}."
        )
    checked = {}
    for table, fn in priority_fns.items():
        if not isinstance(table, str) or not table:
            raise ValueError(f"priority_fns keys must be non-empty table names (str), got {table!r}.")
        if fn is not None and not callable(fn):
            raise ValueError(
                f"priority_fns[{table!r}] must be a callable taking the item as numpy "
                f"arrays and returning a float, or None for priority 1.0; got {fn!r}."
            )
        checked[table] = fn
    return checked


def leaf_spec(spec: Any, leading_dims: tuple = ()) -> LeafSpec:
    """The backend-free ``LeafSpec`` of anything with a shape and dtype (dm_env spec, array), after ``leading_dims``."""
    if not (hasattr(spec, "shape") and hasattr(spec, "dtype")):
        raise ValueError(f"Expected a spec or array with .shape and .dtype (e.g. a dm_env.specs.Array), got {spec!r}.")
    return LeafSpec(tuple(leading_dims) + tuple(spec.shape), np.dtype(spec.dtype))


def nested_leaf_spec(nest: Any, leading_dims: tuple = ()) -> Any:
    """A nest of specs (or arrays) as a nest of ``LeafSpec`` with ``leading_dims`` in front (a table signature)."""
    return tree.map_structure(lambda s: leaf_spec(s, leading_dims), nest)
