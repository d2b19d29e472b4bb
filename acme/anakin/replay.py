"""Replay that lives on the device: a ring buffer of fixed-shape items, written and sampled inside a jitted loop.

Inserts take a batch of candidate items with a mask (the n-step accumulator
emits a variable number of transitions per step, up to ``n`` per environment at
an episode's end), so one fixed-shape write stores exactly the valid ones, in
order, overwriting the oldest once full (FIFO, as the host tables' remover).
Sampling is uniform, or prioritized with ``P(i) = p_i^alpha / sum_j p_j^alpha``
(new items get priority 1.0, as the host adder writes them; the learner's new
priorities replace them). A prioritized draw inverts the cumulative sum of the
priorities (``O(capacity)`` per batch, which on a device costs less than a tree
walk of dependent gathers at the sizes used here).

Why not flashbax: its buffers add a fixed number of items per call, while an
n-step accumulator that matches the host adder at episode ends adds a variable
number; and it would bring flax and tensorstore into both stacks for this one use.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acme.replay.local import ReplaySample, SampleInfo


class DeviceReplayState(NamedTuple):
    items: Any  # the item nest, leaves [capacity, ...]
    priorities: jax.Array  # [capacity] float32 (1.0 for a new item)
    head: jax.Array  # where the next item goes
    size: jax.Array  # items held (at most capacity)


class DeviceReplay:
    """A FIFO ring buffer of ``capacity`` items shaped like ``example`` (one item, no batch axis).

    ``priority_exponent`` None samples uniformly; a number in [0, 1] samples in
    proportion to ``priority ** priority_exponent``.
    """

    def __init__(self, capacity: int, priority_exponent: float | None = None):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be an integer >= 1, got {capacity!r}.")
        if priority_exponent is not None and not 0.0 <= float(priority_exponent) <= 1.0:
            raise ValueError(f"priority_exponent must be in [0, 1] or None (uniform), got {priority_exponent!r}.")
        self.capacity = capacity
        self.priority_exponent = priority_exponent

    def init(self, example: Any) -> DeviceReplayState:
        items = jax.tree.map(lambda x: jnp.zeros((self.capacity, *jnp.shape(x)), jnp.asarray(x).dtype), example)
        return DeviceReplayState(
            items=items,
            priorities=jnp.ones(self.capacity, jnp.float32),
            head=jnp.zeros((), jnp.int32),
            size=jnp.zeros((), jnp.int32),
        )

    def insert(self, state: DeviceReplayState, items: Any, mask: jax.Array) -> DeviceReplayState:
        """Stores the items (leaves ``[M, ...]``) whose ``mask`` is true, in order; the others are dropped.

        At most ``capacity`` are kept from one call (the newest), as if inserted one by one.
        """
        mask = mask.reshape(-1)
        count = jnp.sum(mask, dtype=jnp.int32)
        order = jnp.cumsum(mask, dtype=jnp.int32) - 1  # position among the valid ones
        overwritten = order < count - self.capacity  # the oldest of more than ``capacity`` new items
        slots = jnp.where(mask & ~overwritten, (state.head + order) % self.capacity, self.capacity)  # capacity: drop

        def write(buffer, new):
            return buffer.at[slots].set(new.reshape((-1, *buffer.shape[1:])).astype(buffer.dtype), mode="drop")

        return DeviceReplayState(
            items=jax.tree.map(write, state.items, items),
            priorities=state.priorities.at[slots].set(1.0, mode="drop"),
            head=(state.head + count) % self.capacity,
            size=jnp.minimum(state.size + count, self.capacity),
        )

    def sample(self, state: DeviceReplayState, key: jax.Array, shape: tuple[int, ...]) -> ReplaySample:
        """A ``ReplaySample`` of items drawn with replacement, leaves ``[*shape, ...]`` (the buffer must not be empty).

        ``info.key`` holds each item's slot, for ``update_priorities``; ``info.times_sampled`` is not tracked
        on the device (zeros).
        """
        if self.priority_exponent is None:  # O(batch): nothing of the buffer but the drawn items is read
            slots = jax.random.randint(key, shape, 0, jnp.maximum(state.size, 1))
            probability = jnp.broadcast_to(1.0 / jnp.maximum(state.size, 1).astype(jnp.float32), shape)
        else:
            held = jnp.arange(self.capacity) < state.size
            weights = jnp.where(held, state.priorities**self.priority_exponent, 0.0)
            cumulative = jnp.cumsum(weights)
            draws = jax.random.uniform(key, shape) * cumulative[-1]
            slots = jnp.minimum(jnp.searchsorted(cumulative, draws, side="right"), state.size - 1)
            probability = weights[slots] / cumulative[-1]
        info = SampleInfo(
            key=slots,
            probability=probability,
            table_size=jnp.broadcast_to(state.size, shape),
            priority=state.priorities[slots],
            times_sampled=jnp.zeros(shape, jnp.int32),
        )
        return ReplaySample(info=info, data=jax.tree.map(lambda x: x[slots], state.items))

    def update_priorities(self, state: DeviceReplayState, slots: jax.Array, priorities: jax.Array) -> DeviceReplayState:
        """Sets the priorities of the items at ``slots`` (a later write of the same slot wins)."""
        return state._replace(
            priorities=state.priorities.at[slots.reshape(-1)].set(priorities.reshape(-1).astype(jnp.float32))
        )
