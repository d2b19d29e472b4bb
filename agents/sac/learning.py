"""The SAC learner: twin soft Q-learning, a reparameterised policy step and temperature tuning."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax import networks as networks_lib
from acme.jax.learner import SGDLearner
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from acme.jax.targets import polyak_update
from acme.utils import counting, loggers
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
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.init_policy(policy_key)
    critic_params = networks.init_critic(critic_key)
    log_temperature = jnp.asarray(jnp.log(config.initial_temperature), jnp.float32)
    optimizer = optax.adam(config.learning_rate)
    return TrainingState(
        policy_params=policy_params,
        critic_params=critic_params,
        target_critic_params=critic_params,
        log_temperature=log_temperature,
        policy_opt_state=optimizer.init(policy_params),
        critic_opt_state=optimizer.init(critic_params),
        temperature_opt_state=optimizer.init(log_temperature),
        observation_stats=ObservationNormalizer().init(networks.environment_spec.observations),
        steps=jnp.zeros((), jnp.int32),
        random_key=state_key,
    )


def make_update(networks: SACNetworks, config: SACConfig):
    """``update(state, transitions) -> (state, metrics)``, one gradient step of every part."""
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
        return loss, jnp.mean(q)

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
        (critic_loss, mean_q), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, t, critic_key
        )
        critic_updates, critic_opt_state = optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        (policy_loss, log_prob), policy_grads = jax.value_and_grad(policy_loss_fn, has_aux=True)(
            state.policy_params, critic_params, state.log_temperature, t, policy_key
        )
        policy_updates, policy_opt_state = optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)

        temperature_loss, temperature_grad = jax.value_and_grad(temperature_loss_fn)(state.log_temperature, log_prob)
        temperature_update, temperature_opt_state = optimizer.update(temperature_grad, state.temperature_opt_state)
        log_temperature = optax.apply_updates(state.log_temperature, temperature_update)

        new_state = TrainingState(
            policy_params=policy_params,
            critic_params=critic_params,
            target_critic_params=polyak_update(critic_params, state.target_critic_params, config.tau),
            log_temperature=log_temperature,
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            temperature_opt_state=temperature_opt_state,
            observation_stats=stats,
            steps=state.steps + 1,
            random_key=key,
        )
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": policy_loss,
            "temperature_loss": temperature_loss,
            "temperature": jnp.exp(log_temperature),
            "entropy": -jnp.mean(log_prob),
            "mean_q": mean_q,
        }
        return new_state, metrics

    return update


def policy_variables(state: TrainingState) -> dict:
    """What actors and snapshots need: the policy parameters and observation statistics."""
    return {
        "policy": (state.policy_params, state.observation_stats),
        "critic": state.critic_params,
        "target_critic": state.target_critic_params,
    }


class SACLearner(SGDLearner):
    """SAC's learner: ``SGDLearner`` over SAC's state and update."""

    def __init__(
        self,
        networks: SACNetworks,
        config: SACConfig,
        random_key: jax.Array,
        iterator: Iterator[Any],
        counter: Optional[counting.Counter] = None,
        logger: Optional[loggers.Logger] = None,
    ):
        super().__init__(
            name="SAC",
            update=make_update(networks, config),
            initial_state=make_initial_state(networks, config, random_key),
            iterator=iterator,
            variables=policy_variables,
            num_updates_per_step=config.num_sgd_steps_per_step,
            counter=counter,
            logger=logger,
            finite_metrics=("critic_loss", "policy_loss"),
            hint=f"Lower learning_rate (now {config.learning_rate}) or reward_scale, or check the rewards for NaNs.",
        )
