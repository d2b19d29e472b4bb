"""A sum tree over a fixed number of slots: set weights and draw slots in proportion to them, vectorised.

Slot ``i``'s weight lives at leaf ``capacity + i`` of an implicit binary tree
(node ``k`` has children ``2k`` and ``2k + 1``; node 1 is the root and holds
the total). Setting B weights costs O(B log N); drawing B slots costs
O(B log N), both as numpy operations over all B at once.
"""

from __future__ import annotations

import numpy as np


class SumTree:
    """Non-negative weights of ``size`` slots, with proportional sampling."""

    def __init__(self, size: int):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size must be a positive integer, got {size!r}.")
        self._size = size
        self._capacity = 1 << max(0, (size - 1).bit_length())
        self._nodes = np.zeros(2 * self._capacity, np.float64)

    @property
    def total(self) -> float:
        """The sum of every slot's weight."""
        return float(self._nodes[1])

    def get(self, slots: np.ndarray) -> np.ndarray:
        """The weights of ``slots``."""
        return self._nodes[self._capacity + np.asarray(slots, np.int64)]

    def set(self, slots: np.ndarray, weights: np.ndarray) -> None:
        """Sets ``weights[j]`` at ``slots[j]`` (the last wins for a repeated slot)."""
        slots = np.asarray(slots, np.int64).reshape(-1)
        weights = np.broadcast_to(np.asarray(weights, np.float64), slots.shape)
        if slots.size == 0:
            return
        if slots.min() < 0 or slots.max() >= self._size:
            raise IndexError(f"slots must lie in [0, {self._size}), got {slots.min()} .. {slots.max()}.")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("weights must be finite and non-negative.")
        nodes = self._capacity + slots
        self._nodes[nodes] = weights
        nodes = np.unique(nodes >> 1)
        while nodes[0] >= 1:
            self._nodes[nodes] = self._nodes[2 * nodes] + self._nodes[2 * nodes + 1]
            if nodes[0] == 1:
                break
            nodes = np.unique(nodes >> 1)

    def find(self, targets: np.ndarray) -> np.ndarray:
        """For each target in ``[0, total)``, the slot whose cumulative weight interval holds it."""
        targets = np.array(targets, np.float64).reshape(-1)
        nodes = np.ones(targets.shape, np.int64)
        while nodes[0] < self._capacity:  # every node descends one level per pass
            left = 2 * nodes
            left_sum = self._nodes[left]
            go_right = targets >= left_sum
            # Never step into a subtree of zero weight (rounding can put a target just past the end).
            go_right &= self._nodes[left + 1] > 0
            go_right |= left_sum <= 0
            targets = np.where(go_right, targets - left_sum, targets)
            nodes = np.where(go_right, left + 1, left)
        return np.minimum(nodes - self._capacity, self._size - 1)

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` slots drawn with replacement, each with probability weight / total."""
        total = self.total
        if not total > 0:
            raise ValueError("Cannot sample from a sum tree whose weights are all zero.")
        return self.find(rng.uniform(0.0, total, size=count))
