"""A learner around one jitted ``update(state, transitions) -> (state, metrics)``.

Continuous-control agents differ only in their state and update function; the
sampling, NaN checks, step counting, logging, variable serving and
save/restore are shared here.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import jax
import numpy as np

from acme import core
from acme.jax import utils as jax_utils
from acme.utils import counting, loggers

UpdateFn = Callable[[Any, Any], tuple[Any, Mapping[str, Any]]]
VariablesFn = Callable[[Any], Mapping[str, Any]]


def _describe(tree: Any) -> tuple:
    return jax.tree.structure(tree), [(np.shape(x), np.asarray(x).dtype.name) for x in jax.tree.leaves(tree)]


class SGDLearner(core.Learner):
    """Steps ``update`` on batches from ``iterator`` and serves named variables.

    Args:
      name: the agent's name, used in error messages.
      update: jitted or plain ``(state, transitions) -> (state, metrics)``; the
        state is a NamedTuple with a ``steps`` field.
      initial_state: the state before any update.
      iterator: yields ``ReplaySample``s whose ``data`` is passed to ``update``.
      variables: ``state -> {name: pytree}``; ``"policy"`` is what actors fetch.
      finite_metrics: metric names that must stay finite (else FloatingPointError).
      hint: advice appended to the non-finite error.
    """

    def __init__(
        self,
        name: str,
        update: UpdateFn,
        initial_state: Any,
        iterator: Iterator[Any],
        variables: VariablesFn,
        counter: Optional[counting.Counter] = None,
        logger: Optional[loggers.Logger] = None,
        finite_metrics: Sequence[str] = ("critic_loss",),
        hint: str = "",
        log_every_seconds: float = 1.0,
    ):
        self._name = name
        self._update = jax.jit(update)  # no donation: actors may hold the previous parameters
        self._state = initial_state
        self._iterator = iterator
        self._variables = variables
        self._counter = counter if counter is not None else counting.Counter(prefix="learner")
        self._logger = logger if logger is not None else loggers.NoOpLogger()
        self._finite_metrics = tuple(finite_metrics)
        self._hint = hint
        self._log_every = log_every_seconds
        self._last_log = 0.0
        self._num_steps = int(initial_state.steps)
        self._num_counted_steps = self._num_steps

    @property
    def num_steps(self) -> int:
        return self._num_steps

    @property
    def state(self) -> Any:
        return self._state

    def step(self) -> None:
        sample = next(self._iterator)
        self._state, metrics = self._update(self._state, sample.data)
        self._num_steps += 1
        for key in self._finite_metrics:
            jax_utils.check_finite(f"{self._name} {key}", metrics[key], self._num_steps, hint=self._hint)
        now = time.monotonic()
        if now - self._last_log >= self._log_every:
            counts = self._counter.increment(steps=self._num_steps - self._num_counted_steps)
            self._num_counted_steps = self._num_steps
            self._last_log = now
            self._logger.write({**jax_utils.to_numpy(metrics), **counts})

    def get_variables(self, names: Sequence[str]) -> list:
        available = self._variables(self._state)
        unknown = [n for n in names if n not in available]
        if unknown:
            raise KeyError(f"The {self._name} learner has no variables {unknown}; available: {sorted(available)}.")
        return [available[n] for n in names]

    def save(self) -> Any:
        return jax.device_get(self._state)

    def restore(self, state: Any) -> None:
        state = type(self._state)(*state)
        if _describe(state) != _describe(self._state):
            raise ValueError(
                f"Cannot restore this {self._name} learner from a state of another structure or shape "
                "(a checkpoint from another agent, network size or environment?)."
            )
        self._state = jax.device_put(state)
        self._num_steps = self._num_counted_steps = int(state.steps)
