"""The PPO learner: the clipped surrogate objective with GAE, as a loss for the shared ``SGDLearner``.

One learner step takes a batch of ``B`` rollouts ``[B, T + 1]`` from the
queue (episodes joined in one stream; see ``acme.jax.sequences``), computes
advantages once with the current value network, and runs ``num_epochs``
shuffled passes over the ``B * T`` steps in ``num_minibatches`` minibatches,
all in one jitted call. Episodes' final steps (no action was taken there)
carry no loss. With an LSTM (``lstm_size``) the minibatches hold whole
rollouts instead of shuffled steps, each unrolled from the recurrent state its
actor stored at its first step and reset at the episodes' starts within it.

Every step records the learner step of the parameters that chose its action
(``extras["policy_step"]``); the metrics report the policy lag (this learner
step minus that one: ``policy_lag_mean``, ``policy_lag_max``) and, with
``max_policy_lag``, rollouts whose oldest step lags more are dropped from the
loss and counted (``dropped_rollouts``); ``trained_policy_lag_max`` is the
largest lag among the steps the update learned from.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from acme.jax.learner import LearnerDefinition
from acme.jax.on_policy import (
    OnPolicyState,
    init_on_policy_state,
    lag_mask,
    merge_leading,
    minibatch_epochs,
    next_on_policy_state,
    on_policy_variables,
    policy_value_over_time,
    unroll_over_time,
)
from acme.jax.optimization import clipped_adam
from acme.jax.policy_value import RecurrentPolicyValueNetworks
from acme.jax.running_statistics import ObservationNormalizer
from acme.jax.sequences import batched_generalized_advantages, masked_mean
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks

TrainingState = OnPolicyState


class Minibatch(NamedTuple):
    """Steps ``[M, ...]``, or with an LSTM whole rollouts ``[B, T, ...]`` with their episode starts and the
    recurrent state stored at their first step (``()`` without one)."""

    observation: Any
    action: jnp.ndarray
    behaviour_log_prob: jnp.ndarray
    advantage: jnp.ndarray
    target_value: jnp.ndarray
    start_value: Any  # the value before the update's first step (with value_clip; () without)
    mask: jnp.ndarray
    start_of_episode: Any = ()
    first_state: Any = ()


def clipped_surrogate_loss(
    log_prob: jnp.ndarray, behaviour_log_prob: jnp.ndarray, advantage: jnp.ndarray, epsilon: float
) -> jnp.ndarray:
    """Per-step ``-min(rho A, clip(rho, 1 - epsilon, 1 + epsilon) A)`` with ``rho = pi / mu``."""
    ratio = jnp.exp(log_prob - behaviour_log_prob)
    return -jnp.minimum(ratio * advantage, jnp.clip(ratio, 1.0 - epsilon, 1.0 + epsilon) * advantage)


def value_error(value: jnp.ndarray, target: jnp.ndarray, start_value: Any, clip: float) -> jnp.ndarray:
    """Per-step ``(target - value)^2``; with ``clip`` > 0, the larger of it and the error of the value clipped to
    within ``clip`` of ``start_value`` (its value before the update)."""
    error = jnp.square(target - value)
    if clip <= 0:
        return error
    clipped = start_value + jnp.clip(value - start_value, -clip, clip)
    return jnp.maximum(error, jnp.square(target - clipped))


def clip_epsilon_at(config: PPOConfig, learner_steps: jnp.ndarray) -> float | jnp.ndarray:
    """The clip range of the update at ``learner_steps``: ``clip_epsilon``, or with ``clip_epsilon_decays`` its
    linear decay to 0 over the learner steps of ``learning_rate_decay_steps`` optimiser steps (optax's linear
    schedule, as the step size's in ``clipped_adam``)."""
    if not config.clip_epsilon_decays:
        return config.clip_epsilon  # a constant of the program, as it always was
    schedule = optax.linear_schedule(config.clip_epsilon, 0.0, config.learning_rate_decay_steps)
    return schedule(learner_steps * (config.num_epochs * config.num_minibatches))


def make_update(networks: PPONetworks, config: PPOConfig):
    """``update(state, rollouts) -> (state, metrics)``: advantages, then the epochs of minibatch steps."""
    optimizer = clipped_adam(config)
    normalizer = ObservationNormalizer(config.normalize_observations)
    recurrent = isinstance(networks, RecurrentPolicyValueNetworks)

    def policy_and_value(params, batch: Minibatch):
        if recurrent:
            return unroll_over_time(networks, params, batch.observation, batch.start_of_episode, batch.first_state)
        return networks.policy_and_value(params, batch.observation)

    def loss_fn(params, batch: Minibatch, epsilon: float | jnp.ndarray):
        policy_output, value = policy_and_value(params, batch)
        distribution = networks.distribution(policy_output)
        log_prob = distribution.log_prob(batch.action)
        policy_loss = masked_mean(
            clipped_surrogate_loss(log_prob, batch.behaviour_log_prob, batch.advantage, epsilon),
            batch.mask,
        )
        value_loss = masked_mean(
            value_error(value, batch.target_value, batch.start_value, config.value_clip), batch.mask
        )
        entropy = masked_mean(distribution.entropy(), batch.mask)
        loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
        log_ratio = log_prob - batch.behaviour_log_prob
        metrics = {
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "entropy": entropy,
            "approx_kl": masked_mean(jnp.exp(log_ratio) - 1.0 - log_ratio, batch.mask),
            "clip_fraction": masked_mean(1.0 * (jnp.abs(jnp.exp(log_ratio) - 1.0) > epsilon), batch.mask),
        }
        return loss, metrics

    def update(state: TrainingState, rollouts) -> tuple[TrainingState, dict]:
        key, epochs_key = jax.random.split(state.random_key)
        unroll = rollouts.reward.shape[1] - 1
        lags = lag_mask(state.steps, rollouts, config.max_policy_lag)
        observations = jax.tree.map(lambda x: x[:, :unroll], rollouts.observation)
        stats = normalizer.update(state.observation_stats, jax.tree.map(merge_leading, observations))
        normalized = normalizer.apply(stats, rollouts.observation)
        _, values = policy_value_over_time(networks, state.params, rollouts, normalized)  # [B, T + 1]
        discounts = config.discount * rollouts.discount[:, :unroll].astype(jnp.float32)
        rewards = rollouts.reward[:, :unroll].astype(jnp.float32)
        advantages = batched_generalized_advantages(rewards, discounts, values, lags.is_final, config.gae_lambda)
        target_values = advantages + values[:, :unroll]
        if config.normalize_advantages:
            mean = masked_mean(advantages, lags.mask)
            std = jnp.sqrt(masked_mean(jnp.square(advantages - mean), lags.mask))
            advantages = (advantages - mean) / (std + 1e-8)
        steps = Minibatch(
            observation=jax.tree.map(lambda x: x[:, :unroll], normalized),
            action=rollouts.extras["raw_action"][:, :unroll],
            behaviour_log_prob=rollouts.extras["log_prob"][:, :unroll],
            advantage=jax.lax.stop_gradient(advantages),
            target_value=jax.lax.stop_gradient(target_values),
            start_value=jax.lax.stop_gradient(values[:, :unroll]) if config.value_clip > 0 else (),
            mask=lags.mask,
        )
        if recurrent:  # minibatches of whole rollouts [B, T]
            steps = steps._replace(
                start_of_episode=rollouts.start_of_episode[:, :unroll],
                first_state=jax.tree.map(lambda x: x[:, 0], rollouts.extras["core_state"]),
            )
        else:  # minibatches of shuffled steps [B * T]
            steps = jax.tree.map(merge_leading, steps)
        epsilon = clip_epsilon_at(config, state.steps)
        params, opt_state, metrics = minibatch_epochs(
            lambda params, batch: loss_fn(params, batch, epsilon),
            optimizer,
            state.params,
            state.opt_state,
            steps,
            epochs_key,
            config.num_epochs,
            config.num_minibatches,
            1.5 * config.target_kl,
        )
        new_state, lagged = next_on_policy_state(state, params, opt_state, stats, key, lags)
        metrics = {
            **metrics,  # the last applied minibatch's (and with target_kl, the share of minibatch steps applied)
            "mean_value": masked_mean(values[:, :unroll], ~lags.is_final),
            **({"clip_epsilon": epsilon} if config.clip_epsilon_decays else {}),
            **lagged,
        }
        return new_state, metrics

    return update


PPO_LEARNER = LearnerDefinition(
    name="PPO",
    make_update=make_update,
    make_initial_state=init_on_policy_state,
    variables=on_policy_variables,
    finite_metrics=("policy_loss", "value_loss"),
    hint=lambda config: f"Lower learning_rate (now {config.learning_rate}) or check the rewards for NaNs.",
)
