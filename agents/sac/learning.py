"""The SAC learner: twin soft Q-learning, a reparameterised policy step and temperature tuning."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax import networks as networks_lib
from acme.jax.actor_critic import actor_critic_fields, actor_critic_learner, next_step
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from agents.sac.config import SACConfig
from agents.sac.networks import SACNetworks


class TrainingState(NamedTuple):
    policy_params: Any
    critic_params: Any
    target_critic_params: Any
    log_temperature: jnp.ndarray
    policy_opt_state: Any
    critic_opt_state: Any
    temperature_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray
    random_key: jax.Array


def make_initial_state(networks: SACNetworks, config: SACConfig, key: jax.Array) -> TrainingState:
    optimizer = optax.adam(config.learning_rate)
    fields = actor_critic_fields(networks, optimizer, key)
    del fields["target_policy_params"]  # SAC's policy has no target
    log_temperature = jnp.asarray(jnp.log(config.initial_temperature), jnp.float32)
    return TrainingState(
        **fields, log_temperature=log_temperature, temperature_opt_state=optimizer.init(log_temperature)
    )


class CriticRegulariser(NamedTuple):
    """A term added to SAC's critic loss (CQL's conservative penalty), and the step of its own state.

    ``loss(critic_params, state, transitions, key) -> (term, aux)`` is added to the critic loss;
    ``step(state, aux) -> (changed_fields, metrics)`` updates the fields the regulariser keeps in the state
    after the critic's step (e.g. an automatically tuned weight) and reports its metrics."""

    loss: Callable[..., tuple[jnp.ndarray, Any]]
    step: Callable[[Any, Any], tuple[dict, dict]]


def make_update(networks: SACNetworks, config: SACConfig, regulariser: CriticRegulariser | None = None):
    """``update(state, transitions) -> (state, metrics)``, one gradient step of every part; with ``regulariser``
    its term is added to the critic loss and its state stepped after the critic."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)
    target_entropy = -float(networks.action_size) if config.target_entropy is None else config.target_entropy

    def critic_loss_fn(critic_params, state: TrainingState, t: types.Transition, key):
        temperature = jnp.exp(state.log_temperature)
        mean, log_std = networks.policy.apply(state.policy_params, t.next_observation)
        next_action, next_log_prob = networks_lib.sample_tanh_gaussian(key, mean, log_std)
        next_q = jnp.min(networks.critic.apply(state.target_critic_params, t.next_observation, next_action), axis=0)
        # The adder's discount already holds gamma^n and termination.
        target = config.reward_scale * t.reward + t.discount * (next_q - temperature * next_log_prob)
        q = networks.critic.apply(critic_params, t.observation, t.action)
        loss = 0.5 * jnp.mean(jnp.sum(jnp.square(q - jax.lax.stop_gradient(target)), axis=0))
        if regulariser is None:
            return loss, (jnp.mean(q), None)
        term, aux = regulariser.loss(critic_params, state, t, jax.random.fold_in(key, 1))
        return loss + term, (jnp.mean(q), aux)

    def policy_loss_fn(policy_params, critic_params, log_temperature, t: types.Transition, key):
        mean, log_std = networks.policy.apply(policy_params, t.observation)
        action, log_prob = networks_lib.sample_tanh_gaussian(key, mean, log_std)
        q = jnp.min(networks.critic.apply(critic_params, t.observation, action), axis=0)
        loss = jnp.mean(jnp.exp(log_temperature) * log_prob - q)
        return loss, log_prob

    def temperature_loss_fn(log_temperature, log_prob):
        return jnp.mean(-jnp.exp(log_temperature) * jax.lax.stop_gradient(log_prob + target_entropy))

    def update(state: TrainingState, transitions: types.Transition):
        key, critic_key, policy_key = jax.random.split(state.random_key, 3)
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        critic = gradient_step(
            critic_loss_fn, optimizer, state.critic_params, state.critic_opt_state, state, t, critic_key
        )
        policy = gradient_step(
            policy_loss_fn,
            optimizer,
            state.policy_params,
            state.policy_opt_state,
            critic.params,
            state.log_temperature,
            t,
            policy_key,
        )
        (critic_loss, (mean_q, regulariser_aux)), (policy_loss, log_prob) = critic.value, policy.value
        changed, regulariser_metrics = regulariser.step(state, regulariser_aux) if regulariser else ({}, {})
        temperature_loss, _, log_temperature, temperature_opt_state = gradient_step(
            temperature_loss_fn,
            optimizer,
            state.log_temperature,
            state.temperature_opt_state,
            log_prob,
            has_aux=False,
        )
        new_state = next_step(
            state,
            stats,
            key,
            policy=policy,
            critic=critic,
            target_critic_params=optax.incremental_update(critic.params, state.target_critic_params, config.tau),
            log_temperature=log_temperature,
            temperature_opt_state=temperature_opt_state,
            **changed,
        )
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": policy_loss,
            "temperature_loss": temperature_loss,
            "temperature": jnp.exp(log_temperature),
            "entropy": -jnp.mean(log_prob),
            "mean_q": mean_q,
            **regulariser_metrics,
        }
        return new_state, metrics

    return update


SAC_LEARNER = actor_critic_learner("SAC", make_update, make_initial_state)
