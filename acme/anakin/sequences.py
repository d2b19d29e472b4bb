"""Fixed-length sequences made on the device, the same as ``acme.adders.SequenceAdder`` writes them with zero
padding at episode ends (``pad_end_of_episode=True``, ``break_end_of_episode=True``: R2D2's adder).

Each environment keeps its episode's newest ``length + 1`` rows (``acme.adders.Step``) and how many rows the
episode has so far. A step adds the row of the timestep acted on (its observation, the action, the reward and
environment discount that followed, whether it began the episode, the policy's extras) and, at an episode's end,
the final row (the last observation, everything else zero). Items start at rows ``0, period, 2 * period, ...`` of
an episode and hold ``length`` rows. After a step the candidate items are the starts that the step completed:

* the item whose last row the step added (one at most without an episode end, two at one);
* at an episode's end, every start before the final row whose item runs past it, padded with zero rows.

These are the multiples of ``period`` from the lowest start whose item ends in a row this step added up to
``count - length`` (``count - 2`` at an episode's end: the final row starts no item), at most
``ceil(length / period)`` of them, emitted oldest first as the host adder writes them. The timestep after a LAST
one (the next episode's FIRST, whose action the environment ignored) adds no row.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acme.adders.base import Step
from acme.environments.jax_native import FIRST, LAST


class SequenceWindow(NamedTuple):
    """One environment's newest rows, oldest first (leaves ``[length + 1, ...]``; slots before its episode's first
    row are stale and never read), and the rows its episode has so far."""

    rows: Step
    count: jax.Array


def candidates_per_step(length: int, period: int) -> int:
    """The most items one step can complete: ``ceil(length / period)``."""
    return -(-length // period)


def init_window(length: int, row: Step) -> SequenceWindow:
    """An empty window for rows shaped like ``row`` (one row, no time axis)."""
    rows = jax.tree.map(lambda x: jnp.zeros((length + 1, *jnp.shape(x)), jnp.asarray(x).dtype), row)
    return SequenceWindow(rows=rows, count=jnp.zeros((), jnp.int32))


def _push(rows: Step, row: Step, added: jax.Array) -> Step:
    """``rows`` with ``row`` appended (the oldest dropped) where ``added``; as they were elsewhere."""

    def one(old, new):
        return jnp.where(added, jnp.concatenate([old[1:], jnp.asarray(new, old.dtype)[None]]), old)

    return jax.tree.map(one, rows, row)


def add_step(
    window: SequenceWindow,
    timestep: Any,
    action: Any,
    extras: Any,
    next_timestep: Any,
    length: int,
    period: int,
) -> tuple[SequenceWindow, Step, jax.Array]:
    """Adds the step from ``timestep`` with ``action`` (and the policy's ``extras``) to ``next_timestep``; returns
    the window, the candidate items (leaves ``[K, length, ...]``, ``K = candidates_per_step(length, period)``) and
    which of them are complete (``[K]`` booleans), oldest first."""
    acted = timestep.step_type != LAST  # after a LAST timestep the environment started a new episode instead
    ended = acted & (next_timestep.step_type == LAST)
    row = Step(
        observation=timestep.observation,
        action=action,
        reward=next_timestep.reward,
        discount=next_timestep.discount,
        start_of_episode=timestep.step_type == FIRST,
        extras=extras,
    )
    zeros = jax.tree.map(jnp.zeros_like, row)
    final = zeros._replace(observation=next_timestep.observation)
    before = jnp.where(timestep.step_type == FIRST, 0, window.count)  # a FIRST timestep begins the episode's rows
    rows = _push(window.rows, row, acted)
    rows = _push(rows, final, ended)
    count = before + acted + ended

    lowest = jnp.maximum(before - length + 1, 0)  # the first start whose item ends in a row added now
    highest = jnp.where(ended, count - 2, count - length)
    top = jnp.floor_divide(highest, period) * period
    starts = top - period * jnp.arange(candidates_per_step(length, period) - 1, -1, -1)
    complete = acted & (starts >= lowest) & (starts <= highest)
    # Slot i of the window holds row count - (length + 1) + i; the rows after the newest are zero padding.
    offsets = jnp.clip(starts - (count - (length + 1)), 0, length)
    padded = jax.tree.map(lambda x: jnp.concatenate([x, jnp.zeros((length - 1, *x.shape[1:]), x.dtype)]), rows)
    items = jax.vmap(lambda o: jax.tree.map(lambda x: jax.lax.dynamic_slice_in_dim(x, o, length), padded))(offsets)
    return SequenceWindow(rows=rows, count=count), items, complete
