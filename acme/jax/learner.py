"""A learner around one jitted ``update(state, batch) -> (state, metrics)``, U updates per call.

Every agent's learner is this one with its own state and update function (its
loss): the sampling, fused updates, NaN checks, step counting, logging,
priority updates, variable serving and save/restore are shared here.

Fused updates: with ``num_updates_per_step = U`` the iterator yields ``[U, B]``
stacks and one jitted call runs the U updates in a ``jax.lax.scan``, so the
host dispatches once per U updates. Nothing is read back to the host per
update: the finiteness of the watched metrics is tracked on the device (the
first step at which each became NaN or infinite) and read when the learner
logs (its first step, then every ``log_every_seconds``) and before it saves,
so a NaN still stops the run, with the step where it first appeared.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from acme import core
from acme.jax import utils as jax_utils
from acme.jax.sharding import Layout, LearnerSharding
from acme.utils import counting, loggers

UpdateFn = Callable[[Any, Any], tuple[Any, Mapping[str, Any]]]
VariablesFn = Callable[[Any], Mapping[str, Any]]
PRIORITIES = "priorities"  # a metric of per-item priorities, handed to ``on_priorities`` rather than logged


def importance_weights(probabilities: jnp.ndarray, exponent: float) -> jnp.ndarray:
    """Prioritized replay's correction ``(1 / P(i))^exponent``, divided by its largest value in the batch (no
    gradient)."""
    weights = (1.0 / jnp.maximum(probabilities.astype(jnp.float32), 1e-12)) ** exponent
    return jax.lax.stop_gradient(weights / jnp.max(weights))


def _describe(tree: Any) -> tuple:
    """The tree's structure and its leaves' shapes and dtypes (read without fetching a leaf's values, which a leaf
    split over several processes does not allow)."""

    def dtype(x) -> str:
        return np.dtype(x.dtype).name if hasattr(x, "dtype") else np.asarray(x).dtype.name

    return jax.tree.structure(tree), [(np.shape(x), dtype(x)) for x in jax.tree.leaves(tree)]


def fuse_updates(update: UpdateFn, num_updates: int, finite_metrics: Sequence[str]) -> Callable:
    """``step(state, first_bad, batches) -> (state, first_bad, metrics)``: ``num_updates`` updates in one call.

    ``batches`` leaves are ``[U, B, ...]`` (``[B, ...]`` when U is 1).
    ``first_bad`` maps each watched metric to ``(learner step, value)`` of its
    first non-finite value (step -1 while it has none). The metrics returned
    are the last update's, except ``PRIORITIES``, which keeps all U rows.
    """
    finite_metrics = tuple(finite_metrics)

    def one(carry, batch):
        state, first_bad = carry
        state, metrics = update(state, batch)
        step = jnp.asarray(state.steps, jnp.int32)
        for name in finite_metrics:
            value = jnp.asarray(metrics[name], jnp.float32)
            seen, old_value = first_bad[name]
            new = (seen < 0) & ~jnp.isfinite(value)
            first_bad = {**first_bad, name: (jnp.where(new, step, seen), jnp.where(new, value, old_value))}
        return (state, first_bad), metrics

    def step(state, first_bad, batches):
        if num_updates == 1:
            (state, first_bad), metrics = one((state, first_bad), batches)
            return state, first_bad, metrics
        (state, first_bad), metrics = jax.lax.scan(one, (state, first_bad), batches)
        return state, first_bad, {k: v if k == PRIORITIES else v[-1] for k, v in metrics.items()}

    return step


class SGDLearner(core.Learner):
    """Steps ``update`` on batches from ``iterator`` and serves named variables.

    Args:
      name: the agent's name, used in error messages.
      update: jitted or plain ``(state, batch) -> (state, metrics)`` (the agent's
        loss and optimiser step); the state is a NamedTuple with a ``steps`` field.
      initial_state: the state before any update.
      iterator: yields ``ReplaySample``\\ s; ``[U, B]`` stacks when ``num_updates_per_step`` is U > 1.
      variables: ``state -> {name: pytree}``; ``"policy"`` is what actors fetch.
      finite_metrics: metric names that must stay finite (else FloatingPointError).
      hint: advice appended to the non-finite error.
      num_updates_per_step: U, the updates one ``step()`` runs in one jitted call.
      batch_fn: ``ReplaySample -> batch`` given to ``update`` (default: its ``data``).
      on_priorities: ``(sample, priorities)`` called after each step when the
        update returns a ``PRIORITIES`` metric (e.g. to write them to the replay).
      sharding: the devices the learner runs on and the layout of its state and batches
        (``acme.jax.sharding.LearnerSharding``); None: jax's default device, as one array each.
    """

    def __init__(
        self,
        name: str,
        update: UpdateFn,
        initial_state: Any,
        iterator: Iterator[Any],
        variables: VariablesFn,
        counter: counting.Counter | None = None,
        logger: loggers.Logger | None = None,
        finite_metrics: Sequence[str] = ("critic_loss",),
        hint: str = "",
        log_every_seconds: float = 1.0,
        num_updates_per_step: int = 1,
        batch_fn: Callable[[Any], Any] | None = None,
        on_priorities: Callable[[Any, np.ndarray], None] | None = None,
        sharding: LearnerSharding | None = None,
    ):
        if (
            isinstance(num_updates_per_step, bool)
            or not isinstance(num_updates_per_step, int)
            or (num_updates_per_step < 1)
        ):
            raise ValueError(f"num_updates_per_step must be a positive integer, got {num_updates_per_step!r}.")
        self._name = name
        self._num_updates = num_updates_per_step
        self._finite_metrics = tuple(finite_metrics)
        fused = fuse_updates(update, num_updates_per_step, self._finite_metrics)
        self._first_bad = {m: (jnp.int32(-1), jnp.float32(0.0)) for m in self._finite_metrics}
        self._layout = None if sharding is None else Layout(sharding, initial_state)
        self._batch_shardings = None  # the layout's, for the first batch's structure
        if self._layout is None:  # No donation: actors may hold the previous parameters.
            self._step_fn = jax.jit(fused)
            self._state = initial_state
        else:  # the state and batches are put in their layout; metrics and priorities come back whole
            layout = self._layout
            self._step_fn = jax.jit(fused, out_shardings=(layout.state, layout.replicated, layout.replicated))
            self._state = jax.device_put(initial_state, layout.state)
            self._first_bad = jax.device_put(self._first_bad, layout.replicated)
        self._iterator = iterator
        self._variables = variables
        self._batch_fn = batch_fn or (lambda sample: sample.data)
        self._on_priorities = on_priorities
        self._counter = counter if counter is not None else counting.Counter(prefix="learner")
        self._logger = logger if logger is not None else loggers.NoOpLogger()
        self._hint = hint
        self._log_every = log_every_seconds
        self._last_log = 0.0
        self._num_steps = int(initial_state.steps)
        self._num_counted_steps = self._num_steps

    @property
    def num_steps(self) -> int:
        """Updates taken so far (U per ``step()``)."""
        return self._num_steps

    @property
    def num_updates_per_step(self) -> int:
        return self._num_updates

    @property
    def state(self) -> Any:
        return self._state

    @property
    def layout(self) -> Layout | None:
        """The learner's mesh and the shardings of its state and batches (None without a sharding)."""
        return self._layout

    def placed_batch(self, sample: Any) -> Any:
        """The batch ``update`` receives for ``sample``, in the layout's shardings (as it is without one)."""
        batch = self._batch_fn(sample)
        if self._layout is not None:
            if self._batch_shardings is None:
                self._batch_shardings = self._layout.batch(batch, stacked=self._num_updates > 1)
            batch = self._layout.global_batch(batch, self._batch_shardings)
        return batch

    def compile_step(self, sample: Any) -> Any:
        """The compiled call one ``step()`` makes on a sample like ``sample`` (nothing is run or changed): its
        ``memory_analysis()``, ``cost_analysis()`` and ``as_text()`` are XLA's figures for one device."""
        return self._step_fn.lower(self._state, self._first_bad, self.placed_batch(sample)).compile()

    def step(self) -> None:
        sample = next(self._iterator)
        batch = self.placed_batch(sample)
        self._state, self._first_bad, metrics = self._step_fn(self._state, self._first_bad, batch)
        self._num_steps += self._num_updates
        priorities = metrics.pop(PRIORITIES, None)
        if priorities is not None and self._on_priorities is not None:
            priorities = np.asarray(priorities)
            if self._layout is not None:  # over several processes, the rows of this process's sample
                priorities = self._layout.local_rows(priorities, stacked=self._num_updates > 1)
            self._on_priorities(sample, priorities)
        now = time.monotonic()
        if now - self._last_log >= self._log_every:
            self.check_finite()
            counts = self._count_steps()
            self._last_log = now
            self._logger.write({**jax_utils.to_numpy(metrics), **counts})

    def _count_steps(self) -> Mapping[str, Any]:
        """Adds the steps taken since the last call to the counter; returns its counts."""
        counts = self._counter.increment(steps=self._num_steps - self._num_counted_steps)
        self._num_counted_steps = self._num_steps
        return counts

    def close(self) -> None:
        """Closes the learner's logger (its files are complete once this returns)."""
        self._logger.close()

    def check_finite(self) -> None:
        """Raises FloatingPointError naming the first step at which a watched metric became NaN or infinite."""
        for name, (step, value) in jax.device_get(self._first_bad).items():
            if int(step) >= 0:
                raise FloatingPointError(
                    f"{self._name} {name} became {float(value)} at learner step {int(step)}. {self._hint}".strip()
                )

    def get_variables(self, names: Sequence[str]) -> list:
        available = self._variables(self._state)
        unknown = [n for n in names if n not in available]
        if unknown:
            raise KeyError(f"The {self._name} learner has no variables {unknown}; available: {sorted(available)}.")
        return [available[n] for n in names]

    def save(self) -> Any:
        self.check_finite()  # a checkpoint never holds a state that went non-finite
        self._count_steps()  # the counts saved beside a checkpoint hold every step it holds
        return jax.device_get(self._state) if self._layout is None else self._layout.fetch(self._state)

    def restore(self, state: Any) -> None:
        state = type(self._state)(*state)
        if _describe(state) != _describe(self._state):
            raise ValueError(
                f"Cannot restore this {self._name} learner from a state of another structure or shape "
                "(a checkpoint from another agent, network size or environment?)."
            )
        self._state = jax.device_put(state, None if self._layout is None else self._layout.state)
        self._num_steps = self._num_counted_steps = int(state.steps)


@dataclasses.dataclass(frozen=True)
class LearnerDefinition:
    """What an agent brings to ``SGDLearner``: its update (the loss and optimiser steps), its state, its variables.

    ``make_update(networks, config)`` and ``make_initial_state(networks, config,
    key)`` build the update and the starting state; ``variables`` serves named
    variables from a state (``"policy"`` is what actors fetch);
    ``finite_metrics`` must stay finite, and ``hint(config)`` is the advice
    added to the error when one does not. ``make_batch_fn(config)``, if given,
    is the ``batch_fn`` that turns a sample into the update's batch (default:
    its data). ``config.num_sgd_steps_per_step`` is the number of fused
    updates per call.
    """

    name: str
    make_update: Callable[[Any, Any], UpdateFn]
    make_initial_state: Callable[[Any, Any, jax.Array], Any]
    variables: VariablesFn
    finite_metrics: tuple[str, ...]
    hint: Callable[[Any], str] = lambda config: ""
    make_batch_fn: Callable[[Any], Callable[[Any], Any]] | None = None

    def make_learner(
        self,
        networks: Any,
        config: Any,
        random_key: jax.Array,
        iterator: Iterator[Any],
        counter: counting.Counter | None = None,
        logger: loggers.Logger | None = None,
        **options: Any,
    ) -> SGDLearner:
        """An ``SGDLearner`` of this agent; ``options`` go to ``SGDLearner`` (e.g. ``on_priorities``)."""
        return SGDLearner(
            name=self.name,
            update=self.make_update(networks, config),
            # One compiled call, not the dozens of small ones an eager network initialisation dispatches.
            initial_state=jax.jit(lambda key: self.make_initial_state(networks, config, key))(random_key),
            iterator=iterator,
            variables=self.variables,
            counter=counter,
            logger=logger,
            finite_metrics=self.finite_metrics,
            hint=self.hint(config),
            num_updates_per_step=config.num_sgd_steps_per_step,
            batch_fn=None if self.make_batch_fn is None else self.make_batch_fn(config),
            **options,
        )
