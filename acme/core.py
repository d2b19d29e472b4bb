"""The component interfaces: actors, learners, variable sources and workers."""

from __future__ import annotations

import abc
import itertools
from typing import Any, Generic, Iterator, Sequence, TypeVar

import dm_env

from acme import types

T = TypeVar("T")


class Actor(abc.ABC):
    """Interacts with K environments at once (K = 1 included): chooses their actions in one call and records
    what each of them saw."""

    @property
    @abc.abstractmethod
    def num_envs(self) -> int:
        """K, the environments this actor drives."""

    @abc.abstractmethod
    def select_actions(self, observations: types.NestedArray) -> types.NestedArray:
        """The K actions for a batch of K observations (leaves ``[K, ...]``), one per environment."""

    @abc.abstractmethod
    def observe_first(self, index: int, timestep: dm_env.TimeStep) -> None:
        """Records the first timestep of environment ``index``'s episode."""

    @abc.abstractmethod
    def observe(self, index: int, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        """Records the action environment ``index`` took and the timestep it led to."""

    @abc.abstractmethod
    def update(self, wait: bool = False) -> None:
        """Refreshes the policy's variables from their source (e.g. the learner)."""


class VariableSource(abc.ABC):
    """Anything that serves named collections of variables (usually a learner)."""

    @abc.abstractmethod
    def get_variables(self, names: Sequence[str]) -> list[types.Variables]:
        """Returns the current values of the named variable collections."""


class Worker(abc.ABC):
    """Something that runs until it is stopped or its budget is spent."""

    @abc.abstractmethod
    def run(self) -> None:
        """Runs the worker."""


class Saveable(abc.ABC, Generic[T]):
    """An object whose state can be saved and restored."""

    @abc.abstractmethod
    def save(self) -> T:
        """Returns the state to save (a pytree of arrays and python scalars)."""

    @abc.abstractmethod
    def restore(self, state: T) -> None:
        """Sets the object's state from what ``save`` returned."""


class Learner(VariableSource, Worker, Saveable):
    """Updates an agent's parameters from data.

    ``step`` performs one update; ``run`` steps forever or ``num_steps`` times.
    """

    @abc.abstractmethod
    def step(self) -> None:
        """Performs one update."""

    def run(self, num_steps: int | None = None) -> None:
        iterator = range(num_steps) if num_steps is not None else itertools.count()
        for _ in iterator:
            self.step()

    def save(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not support saving.")

    def restore(self, state: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support restoring.")


class PrefetchingIterator(Iterator[T], abc.ABC):
    """An iterator that can say whether its next element is ready without blocking."""

    @abc.abstractmethod
    def ready(self) -> bool:
        """True when ``next`` would not block."""

    @abc.abstractmethod
    def retrieved_elements(self) -> int:
        """How many elements have been taken so far."""
