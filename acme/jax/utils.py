"""Small JAX helpers shared by agents."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from acme import types


def add_batch_dim(nest: types.NestedArray) -> types.NestedArray:
    return jax.tree.map(lambda x: jnp.expand_dims(x, 0), nest)


def squeeze_batch_dim(nest: types.NestedArray) -> types.NestedArray:
    return jax.tree.map(lambda x: jnp.squeeze(x, 0), nest)


def batch_concat(nest: types.NestedArray, num_batch_dims: int = 1) -> jnp.ndarray:
    """Flattens every leaf past the batch dims and concatenates them."""
    leaves = jax.tree.leaves(nest)
    flat = [jnp.reshape(x, x.shape[:num_batch_dims] + (-1,)) for x in leaves]
    return jnp.concatenate(flat, axis=-1)


def to_numpy(nest: Any) -> Any:
    return jax.tree.map(np.asarray, nest)


def check_finite(name: str, value: Any, step: int, hint: str = "") -> None:
    """Raises a clear error when a scalar (e.g. a loss) is NaN or infinite."""
    value = float(value)
    if not np.isfinite(value):
        raise FloatingPointError(f"{name} became {value} at learner step {step}. {hint}".strip())
