"""The TD3 learner: clipped double-Q learning with target-policy smoothing and delayed policy updates."""

from __future__ import annotations

from typing import Mapping

import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax.actor_critic import ActorCriticState, actor_critic_learner, init_actor_critic_state, next_step
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer
from agents.td3.config import TD3Config
from agents.td3.networks import TD3Networks

TrainingState = ActorCriticState  # the name older checkpoints stored


def make_initial_state(networks: TD3Networks, config: TD3Config, key: jax.Array) -> TrainingState:
    """Fresh parameters, targets equal to them, and empty optimiser and observation statistics."""
    return init_actor_critic_state(networks, optax.adam(config.learning_rate), key)


def deterministic_policy_gradient_loss(networks: TD3Networks, config: TD3Config):
    """TD3's policy loss: ``-mean Q1(s, pi(s))``, the first critic's value of the policy's action."""

    def policy_loss_fn(policy_params, critic_params, t: types.Transition):
        action = networks.policy.apply(policy_params, t.observation)
        q = networks.critic.apply(critic_params, t.observation, action)[0]  # the first critic, as in the paper
        return -jnp.mean(q)

    return policy_loss_fn


def make_update(networks: TD3Networks, config: TD3Config, make_policy_loss=deterministic_policy_gradient_loss):
    """``update(state, transitions) -> (state, metrics)``: one critic step, and on every
    ``policy_delay``-th learner step (the 1st, the ``policy_delay + 1``-th, ...) one policy
    step and a Polyak update of both targets. ``make_policy_loss(networks, config)`` builds the policy's loss
    ``(policy_params, critic_params, transitions) -> loss`` (TD3's own, or TD3+BC's regularised one)."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)
    policy_loss_fn = make_policy_loss(networks, config)

    def critic_loss_fn(critic_params, state: TrainingState, t: types.Transition, key: jax.Array):
        # Target-policy smoothing: clipped Gaussian noise around the target action, kept in [-1, 1].
        next_action = networks.policy.apply(state.target_policy_params, t.next_observation)
        noise = jnp.clip(
            config.policy_noise * jax.random.normal(key, next_action.shape, next_action.dtype),
            -config.noise_clip,
            config.noise_clip,
        )
        next_action = jnp.clip(next_action + noise, -1.0, 1.0)
        # Clipped double Q: the smaller of the two target critics.
        next_q = jnp.min(networks.critic.apply(state.target_critic_params, t.next_observation, next_action), axis=0)
        # The adder's discount already holds gamma^n and termination.
        target = jax.lax.stop_gradient(config.reward_scale * t.reward + t.discount * next_q)
        q = networks.critic.apply(critic_params, t.observation, t.action)  # [2, B]
        loss = jnp.sum(jnp.mean(jnp.square(q - target), axis=1))  # sum of the two critics' MSEs
        return loss, jnp.mean(q)

    def policy_and_target_step(state: TrainingState, critic_params, t: types.Transition):
        policy_loss, _, policy_params, policy_opt_state = gradient_step(
            policy_loss_fn, optimizer, state.policy_params, state.policy_opt_state, critic_params, t, has_aux=False
        )
        target_policy_params = optax.incremental_update(policy_params, state.target_policy_params, config.tau)
        target_critic_params = optax.incremental_update(critic_params, state.target_critic_params, config.tau)
        return policy_params, policy_opt_state, target_policy_params, target_critic_params, policy_loss

    def no_policy_step(state: TrainingState, critic_params, t: types.Transition):
        # The loss is still reported (without a gradient) so that every step logs a policy_loss.
        policy_loss = policy_loss_fn(state.policy_params, critic_params, t)
        return (
            state.policy_params,
            state.policy_opt_state,
            state.target_policy_params,
            state.target_critic_params,
            policy_loss,
        )

    def update(state: TrainingState, transitions: types.Transition) -> tuple[TrainingState, Mapping[str, jnp.ndarray]]:
        key, noise_key = jax.random.split(state.random_key)
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        (critic_loss, mean_q), _, critic_params, critic_opt_state = gradient_step(
            critic_loss_fn, optimizer, state.critic_params, state.critic_opt_state, state, t, noise_key
        )

        # Delayed updates: only one branch runs, so skipped steps cost no policy gradient.
        update_policy = state.steps % config.policy_delay == 0
        policy_params, policy_opt_state, target_policy_params, target_critic_params, policy_loss = jax.lax.cond(
            update_policy, policy_and_target_step, no_policy_step, state, critic_params, t
        )

        new_state = next_step(
            state,
            stats,
            key,
            policy_params=policy_params,
            policy_opt_state=policy_opt_state,
            critic_params=critic_params,
            critic_opt_state=critic_opt_state,
            target_policy_params=target_policy_params,
            target_critic_params=target_critic_params,
        )
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": policy_loss,
            "mean_q": mean_q,
            "policy_updated": update_policy.astype(jnp.float32),
        }
        return new_state, metrics

    return update


TD3_LEARNER = actor_critic_learner("TD3", make_update, make_initial_state)
