"""The training state and step of value-based learners (DQN, R2D2): online parameters, a target copy refreshed
every ``target_update_period`` learner steps, one optimiser."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from acme.jax.optimization import OptimizerStep, gradient_step


class TargetNetworkState(NamedTuple):
    params: Any
    target_params: Any
    opt_state: Any
    steps: jnp.ndarray
    random_key: jax.Array


def init_target_network_state(
    params: Any, optimizer: optax.GradientTransformation, random_key: jax.Array
) -> TargetNetworkState:
    """The state before any update: the target starts as a copy of ``params``."""
    return TargetNetworkState(params, params, optimizer.init(params), jnp.zeros((), jnp.int32), random_key)


def target_network_step(
    loss_fn: Callable[..., Any],
    optimizer: optax.GradientTransformation,
    state: TargetNetworkState,
    target_update_period: int,
    *batch: Any,
) -> tuple[TargetNetworkState, OptimizerStep]:
    """One optimiser step on ``loss_fn(params, target_params, *batch) -> (loss, aux)``; the target parameters
    become the online ones every ``target_update_period`` steps. Returns the new state and the ``OptimizerStep``
    (its ``value`` is ``(loss, aux)``)."""
    step = gradient_step(loss_fn, optimizer, state.params, state.opt_state, state.target_params, *batch)
    steps = state.steps + 1
    target_params = optax.periodic_update(step.params, state.target_params, steps, target_update_period)
    return TargetNetworkState(step.params, target_params, step.opt_state, steps, state.random_key), step
