"""One optimiser step, the sequence every agent's update repeats: gradients, the optimiser's update, new parameters."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import optax


class OptimizerStep(NamedTuple):
    """What one optimiser step gives: the loss function's value, the gradients, new parameters and optimiser state."""

    value: Any
    gradients: Any
    params: Any
    opt_state: Any


def apply_gradients(
    optimizer: optax.GradientTransformation, gradients: Any, params: Any, opt_state: Any
) -> tuple[Any, Any]:
    """``(new params, new optimiser state)`` after ``optimizer`` turns ``gradients`` into an update of ``params``."""
    updates, opt_state = optimizer.update(gradients, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def gradient_step(
    loss_fn: Callable[..., Any],
    optimizer: optax.GradientTransformation,
    params: Any,
    opt_state: Any,
    *args: Any,
    has_aux: bool = True,
) -> OptimizerStep:
    """Differentiates ``loss_fn(params, *args)`` with respect to ``params`` and takes one optimiser step.

    Returns ``OptimizerStep(value, gradients, params, opt_state)`` (it unpacks
    as a 4-tuple), where ``value`` is what ``loss_fn`` returned: ``(loss, aux)``
    when ``has_aux`` (the default), else the loss.
    """
    value, gradients = jax.value_and_grad(loss_fn, has_aux=has_aux)(params, *args)
    params, opt_state = apply_gradients(optimizer, gradients, params, opt_state)
    return OptimizerStep(value, gradients, params, opt_state)


def clipped_adam(config: Any) -> optax.GradientTransformation:
    """Adam (``config.learning_rate``, ``config.adam_eps``) after clipping the gradients' global norm to
    ``config.max_gradient_norm``: the optimiser of DQN, R2D2, PPO, IMPALA and PQN.

    A config with a ``learning_rate_decay_steps`` field other than 0 decays the step size linearly to
    ``config.final_learning_rate`` over that many optimiser steps (and keeps it there)."""
    learning_rate = config.learning_rate
    decay_steps = getattr(config, "learning_rate_decay_steps", 0)
    if decay_steps:
        learning_rate = optax.linear_schedule(config.learning_rate, config.final_learning_rate, decay_steps)
    return optax.chain(
        optax.clip_by_global_norm(config.max_gradient_norm),
        optax.adam(learning_rate, eps=config.adam_eps),
    )


def clipped_rmsprop(config: Any) -> optax.GradientTransformation:
    """Centred RMSProp (``config.learning_rate``, squared-gradient decay ``config.rmsprop_decay``) after clipping the
    gradients' global norm to ``config.max_gradient_norm``, with ``config.rmsprop_eps`` added to the root of the
    centred second moment, not under it: the optimiser of MinAtar's DQN (PyTorch's ``RMSprop(centered=True)``),
    whose epsilon bounds the divisor from below so that small gradients take small steps (Adam's epsilon of 1e-8
    scales them up to steps of about the step size)."""
    return optax.chain(
        optax.clip_by_global_norm(config.max_gradient_norm),
        optax.rmsprop(
            config.learning_rate, decay=config.rmsprop_decay, eps=config.rmsprop_eps, eps_in_sqrt=False, centered=True
        ),
    )
