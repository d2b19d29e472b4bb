"""The IQL learner: an expectile value, critics regressed on it, and advantage-weighted policy regression."""

from __future__ import annotations

from typing import Any, NamedTuple

import distrax
import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax.actor_critic import actor_critic_fields, actor_critic_learner, next_step
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from agents.iql.config import IQLConfig
from agents.iql.networks import IQLNetworks


class IQLState(NamedTuple):
    policy_params: Any
    critic_params: Any
    target_critic_params: Any
    value_params: Any
    policy_opt_state: Any
    critic_opt_state: Any
    value_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray
    random_key: jax.Array


def make_initial_state(networks: IQLNetworks, config: IQLConfig, key: jax.Array) -> IQLState:
    optimizer = optax.adam(config.learning_rate)
    key, value_key = jax.random.split(key)
    fields = actor_critic_fields(networks, optimizer, key)
    del fields["target_policy_params"]  # the policy has no target
    value_params = networks.init_value(value_key)
    return IQLState(**fields, value_params=value_params, value_opt_state=optimizer.init(value_params))


def expectile_loss(difference: jnp.ndarray, expectile: float) -> jnp.ndarray:
    """``|expectile - 1[difference < 0]| * difference^2``, elementwise: the expectile regression loss of
    ``target - prediction``, which an ``expectile`` above 0.5 tilts towards the targets' upper values."""
    weight = jnp.where(difference > 0, expectile, 1.0 - expectile)
    return weight * jnp.square(difference)


def make_update(networks: IQLNetworks, config: IQLConfig):
    """``update(state, transitions) -> (state, metrics)``: one step of the value, then of the critics (towards
    the new value), then of the policy, and a Polyak step of the target critics."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)

    def value_loss_fn(value_params, target_q, observation):
        value = networks.value.apply(value_params, observation)
        return jnp.mean(expectile_loss(target_q - value, config.expectile)), value

    def critic_loss_fn(critic_params, value_params, t: types.Transition):
        # The adder's discount already holds gamma^n and termination.
        target = t.reward + t.discount * networks.value.apply(value_params, t.next_observation)
        q = networks.critic.apply(critic_params, t.observation, t.action)  # [2, B]
        loss = 0.5 * jnp.mean(jnp.sum(jnp.square(q - jax.lax.stop_gradient(target)), axis=0))
        return loss, jnp.mean(q)

    def policy_loss_fn(policy_params, advantage, t: types.Transition):
        mean, std = networks.policy.apply(policy_params, t.observation)
        log_prob = distrax.MultivariateNormalDiag(mean, std).log_prob(t.action)
        weights = jnp.minimum(jnp.exp(config.temperature * advantage), config.max_weight)
        return -jnp.mean(jax.lax.stop_gradient(weights) * log_prob), weights

    def update(state: IQLState, transitions: types.Transition):
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        target_q = jnp.min(networks.critic.apply(state.target_critic_params, t.observation, t.action), axis=0)
        value = gradient_step(
            value_loss_fn, optimizer, state.value_params, state.value_opt_state, target_q, t.observation
        )
        critic = gradient_step(critic_loss_fn, optimizer, state.critic_params, state.critic_opt_state, value.params, t)
        (value_loss, values), (critic_loss, mean_q) = value.value, critic.value
        policy = gradient_step(
            policy_loss_fn, optimizer, state.policy_params, state.policy_opt_state, target_q - values, t
        )
        policy_loss, weights = policy.value
        new_state = next_step(
            state,
            stats,
            state.random_key,
            policy=policy,
            critic=critic,
            target_critic_params=optax.incremental_update(critic.params, state.target_critic_params, config.tau),
            value_params=value.params,
            value_opt_state=value.opt_state,
        )
        metrics = {
            "critic_loss": critic_loss,
            "value_loss": value_loss,
            "policy_loss": policy_loss,
            "mean_q": mean_q,
            "mean_value": jnp.mean(values),
            "mean_weight": jnp.mean(weights),
        }
        return new_state, metrics

    return update


IQL_LEARNER = actor_critic_learner("IQL", make_update, make_initial_state)
