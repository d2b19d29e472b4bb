"""The DQN learner: double Q-learning on n-step transitions, as a loss for the shared ``SGDLearner``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import rlax

from acme import types
from acme.jax.learner import PRIORITIES, LearnerDefinition, importance_weights
from acme.jax.optimization import clipped_adam
from acme.jax.value_learning import TargetNetworkState, init_target_network_state, target_network_step
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks

TrainingState = TargetNetworkState


def make_initial_state(networks: DQNNetworks, config: DQNConfig, random_key: jax.Array) -> TrainingState:
    return init_target_network_state(networks.init(random_key), clipped_adam(config), random_key)


def make_update(networks: DQNNetworks, config: DQNConfig):
    """``update(state, (transitions, probabilities)) -> (state, metrics)``: one double-Q-learning step.

    Targets use the adder's n-step reward and discount (the discount already
    holds gamma^n and any termination), the online network to choose the next
    action and the target network to value it. With prioritized replay the
    loss is importance-weighted by the sampling ``probabilities`` and the
    metrics carry new priorities ``|td|`` (the sampler raises them to its exponent).
    """
    optimizer = clipped_adam(config)
    q_apply = networks.q_network.apply

    def loss_fn(params, target_params, transitions: types.Transition, probabilities):
        # The next state's values take no gradient: computed outside the differentiated part of the step.
        q_t_value, q_t_selector = jax.lax.stop_gradient(
            (q_apply(target_params, transitions.next_observation), q_apply(params, transitions.next_observation))
        )
        q_tm1 = q_apply(params, transitions.observation)
        td_error = jax.vmap(rlax.double_q_learning)(
            q_tm1,
            transitions.action.astype(jnp.int32),
            transitions.reward.astype(jnp.float32),
            transitions.discount.astype(jnp.float32),
            q_t_value,
            q_t_selector,
        )
        losses = rlax.huber_loss(td_error, config.huber_loss_delta)
        if config.prioritized_replay:
            losses = losses * importance_weights(probabilities, config.importance_sampling_exponent)
        loss = jnp.mean(losses)
        return loss, (td_error, jnp.mean(q_tm1))

    def update(state: TrainingState, batch):
        transitions, probabilities = batch
        state, step = target_network_step(
            loss_fn, optimizer, state, config.target_update_period, transitions, probabilities
        )
        loss, (td_error, mean_q) = step.value
        metrics = {"loss": loss, "mean_q": mean_q, "gradient_norm": optax.tree_utils.tree_norm(step.gradients)}
        if config.prioritized_replay:
            metrics[PRIORITIES] = jnp.abs(td_error)
        return state, metrics

    return update


def dqn_variables(state: TrainingState) -> dict:
    """What actors and snapshots read: the online parameters (also as "params"), and the target ones."""
    return {"policy": state.params, "params": state.params, "target_params": state.target_params}


def batch_fn(config: DQNConfig):
    """``sample -> (transitions, probabilities)``: only these go to the device (probabilities for prioritized
    replay only)."""

    def batch(sample):
        return sample.data, sample.info.probability if config.prioritized_replay else None

    return batch


def _hint(config: DQNConfig) -> str:
    return f"Lower learning_rate (now {config.learning_rate}) or max_gradient_norm, or check the rewards for NaNs."


DQN_LEARNER = LearnerDefinition(
    name="DQN",
    make_update=make_update,
    make_initial_state=make_initial_state,
    variables=dqn_variables,
    finite_metrics=("loss",),
    hint=_hint,
    make_batch_fn=batch_fn,
)
