"""Nested-array types shared by every component."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, NamedTuple, Union

import numpy as np

# A (possibly nested) structure of arrays: an observation, an action, a batch.
NestedArray = Any
NestedSpec = Any
NestedTensor = Any
Nest = Union[NestedArray, Iterable["Nest"], Mapping[Any, "Nest"]]  # noqa: UP007 (recursive: needs typing.Union)

# Network parameters and learner outputs.
Params = Any
PRNGKey = Any
Variables = Any

# A function from a random key and observation to an action.
Policy = Callable[..., NestedArray]


class Transition(NamedTuple):
    """One (possibly n-step) transition of experience.

    ``discount`` is the product of the environment discounts over the n steps
    (0 after a true termination), ``reward`` is their discounted sum, and
    ``next_observation`` is the observation n steps later.
    """

    observation: NestedArray
    action: NestedArray
    reward: NestedArray
    discount: NestedArray
    next_observation: NestedArray
    extras: NestedArray = ()


def zeros_like_spec(spec: NestedSpec) -> NestedArray:
    """Zero arrays with the shapes and dtypes of a (nested) spec."""
    import tree

    return tree.map_structure(lambda s: np.zeros(s.shape, s.dtype), spec)
