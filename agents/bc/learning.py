"""The BC learner: one Adam step on the negative log-likelihood (or squared error) of the recorded actions."""

from __future__ import annotations

from typing import Any, NamedTuple

import distrax
import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax.learner import LearnerDefinition
from acme.jax.optimization import gradient_step
from agents.bc.config import BCConfig
from agents.bc.networks import BCNetworks


class BCState(NamedTuple):
    params: Any
    opt_state: Any
    steps: jnp.ndarray
    random_key: jax.Array


def make_loss(networks: BCNetworks, config: BCConfig):
    """``loss(params, transitions) -> (loss, metrics)``: the mean over the batch of the recorded action's
    negative log-likelihood (discrete: under the softmax of the logits; continuous with ``log_likelihood``:
    under the diagonal Gaussian) or of the squared error between the Gaussian's mean and the recorded action."""

    def loss(params, transitions: types.Transition):
        outputs = networks.policy.apply(params, transitions.observation)
        if networks.discrete:
            actions = transitions.action.astype(jnp.int32)
            per_transition = optax.softmax_cross_entropy_with_integer_labels(outputs, actions)
            accuracy = jnp.mean(jnp.argmax(outputs, axis=-1) == actions)
            return jnp.mean(per_transition), {"accuracy": accuracy}
        mean, std = outputs
        actions = transitions.action.astype(jnp.float32)
        squared_error = jnp.sum(jnp.square(mean - actions), axis=-1)
        if config.continuous_loss == "squared_error":
            return jnp.mean(squared_error), {"mean_squared_error": jnp.mean(squared_error)}
        log_likelihood = distrax.MultivariateNormalDiag(mean, std).log_prob(actions)
        return -jnp.mean(log_likelihood), {"mean_squared_error": jnp.mean(squared_error)}

    return loss


def make_update(networks: BCNetworks, config: BCConfig):
    """``update(state, transitions) -> (state, metrics)``: one optimiser step on ``make_loss``."""
    optimizer = optax.adam(config.learning_rate)
    loss_fn = make_loss(networks, config)

    def update(state: BCState, transitions: types.Transition):
        (loss, metrics), _, params, opt_state = gradient_step(
            loss_fn, optimizer, state.params, state.opt_state, transitions
        )
        new_state = BCState(params, opt_state, state.steps + 1, state.random_key)
        return new_state, {"loss": loss, **metrics}

    return update


def make_initial_state(networks: BCNetworks, config: BCConfig, key: jax.Array) -> BCState:
    params_key, state_key = jax.random.split(key)
    params = networks.init(params_key)
    return BCState(params, optax.adam(config.learning_rate).init(params), jnp.zeros((), jnp.int32), state_key)


BC_LEARNER = LearnerDefinition(
    name="BC",
    make_update=make_update,
    make_initial_state=make_initial_state,
    variables=lambda state: {"policy": state.params},
    finite_metrics=("loss",),
    hint=lambda config: f"Lower learning_rate (now {config.learning_rate}), or check the dataset's actions for NaNs.",
)
