"""The PPO learner: the clipped surrogate objective with GAE, as a loss for the shared ``SGDLearner``.

One learner step takes a batch of ``B`` rollouts ``[B, T + 1]`` from the
queue (episodes joined in one stream; see ``acme.jax.sequences``), computes
advantages once with the current value network, and runs ``num_epochs``
shuffled passes over the ``B * T`` steps in ``num_minibatches`` minibatches,
all in one jitted call. Episodes' final steps (no action was taken there)
carry no loss.

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
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from acme.jax.sequences import batched_generalized_advantages, final_steps, masked_mean
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks


class TrainingState(NamedTuple):
    params: Any  # {"policy": ..., "value": ...}
    opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray  # learner steps (batches of rollouts) taken
    random_key: jax.Array
    dropped_rollouts: jnp.ndarray  # rollouts dropped for lagging more than max_policy_lag


class Minibatch(NamedTuple):
    observation: Any
    action: jnp.ndarray
    behaviour_log_prob: jnp.ndarray
    advantage: jnp.ndarray
    target_value: jnp.ndarray
    mask: jnp.ndarray


def make_optimizer(config: PPOConfig) -> optax.GradientTransformation:
    return optax.chain(
        optax.clip_by_global_norm(config.max_gradient_norm),
        optax.adam(config.learning_rate, eps=config.adam_eps),
    )


def make_initial_state(networks: PPONetworks, config: PPOConfig, random_key: jax.Array) -> TrainingState:
    init_key, random_key = jax.random.split(random_key)
    params = networks.init(init_key)
    return TrainingState(
        params=params,
        opt_state=make_optimizer(config).init(params),
        observation_stats=ObservationNormalizer(config.normalize_observations).init(
            networks.environment_spec.observations
        ),
        steps=jnp.zeros((), jnp.int32),
        random_key=random_key,
        dropped_rollouts=jnp.zeros((), jnp.int32),
    )


def clipped_surrogate_loss(
    log_prob: jnp.ndarray, behaviour_log_prob: jnp.ndarray, advantage: jnp.ndarray, epsilon: float
) -> jnp.ndarray:
    """Per-step ``-min(rho A, clip(rho, 1 - epsilon, 1 + epsilon) A)`` with ``rho = pi / mu``."""
    ratio = jnp.exp(log_prob - behaviour_log_prob)
    return -jnp.minimum(ratio * advantage, jnp.clip(ratio, 1.0 - epsilon, 1.0 + epsilon) * advantage)


def _merge(x: jnp.ndarray, leading: int = 2) -> jnp.ndarray:
    return x.reshape((-1, *x.shape[leading:]))


def make_update(networks: PPONetworks, config: PPOConfig):
    """``update(state, rollouts) -> (state, metrics)``: advantages, then the epochs of minibatch steps."""
    optimizer = make_optimizer(config)
    normalizer = ObservationNormalizer(config.normalize_observations)
    policy_apply, value_apply = networks.policy.apply, networks.value.apply

    def loss_fn(params, batch: Minibatch):
        distribution = networks.distribution(policy_apply(params["policy"], batch.observation))
        log_prob = distribution.log_prob(batch.action)
        policy_loss = masked_mean(
            clipped_surrogate_loss(log_prob, batch.behaviour_log_prob, batch.advantage, config.clip_epsilon),
            batch.mask,
        )
        value_loss = masked_mean(
            jnp.square(batch.target_value - value_apply(params["value"], batch.observation)), batch.mask
        )
        entropy = masked_mean(distribution.entropy(), batch.mask)
        loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
        log_ratio = log_prob - batch.behaviour_log_prob
        metrics = {
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "entropy": entropy,
            "approx_kl": masked_mean(jnp.exp(log_ratio) - 1.0 - log_ratio, batch.mask),
            "clip_fraction": masked_mean((jnp.abs(jnp.exp(log_ratio) - 1.0) > config.clip_epsilon) * 1.0, batch.mask),
        }
        return loss, metrics

    def minibatch_step(carry, batch: Minibatch):
        params, opt_state = carry
        (_, metrics), _, params, opt_state = gradient_step(loss_fn, optimizer, params, opt_state, batch)
        return (params, opt_state), metrics

    def epoch(carry, key):
        params, opt_state, steps = carry
        order = jax.random.permutation(key, steps.mask.shape[0])
        shuffled = jax.tree.map(lambda x: x[order].reshape((config.num_minibatches, -1, *x.shape[1:])), steps)
        (params, opt_state), metrics = jax.lax.scan(minibatch_step, (params, opt_state), shuffled)
        return (params, opt_state, steps), metrics

    def update(state: TrainingState, rollouts) -> tuple[TrainingState, dict]:
        key, epochs_key = jax.random.split(state.random_key)
        unroll = rollouts.reward.shape[1] - 1
        is_final = final_steps(rollouts.start_of_episode)  # [B, T]
        acted = ~is_final
        lag = state.steps - rollouts.extras["policy_step"][:, :unroll]  # [B, T]
        if config.max_policy_lag is None:
            kept = jnp.ones(lag.shape[0], bool)
        else:
            kept = jnp.max(jnp.where(acted, lag, 0), axis=1) <= config.max_policy_lag
        mask = acted & kept[:, None]

        observations = jax.tree.map(lambda x: x[:, :unroll], rollouts.observation)
        stats = normalizer.update(state.observation_stats, jax.tree.map(_merge, observations))
        normalized = normalizer.apply(stats, rollouts.observation)
        values = value_apply(state.params["value"], jax.tree.map(_merge, normalized)).reshape(lag.shape[0], -1)
        discounts = config.discount * rollouts.discount[:, :unroll].astype(jnp.float32)
        advantages = batched_generalized_advantages(
            rollouts.reward[:, :unroll].astype(jnp.float32), discounts, values, is_final, config.gae_lambda
        )
        target_values = advantages + values[:, :unroll]
        if config.normalize_advantages:
            mean = masked_mean(advantages, mask)
            std = jnp.sqrt(masked_mean(jnp.square(advantages - mean), mask))
            advantages = (advantages - mean) / (std + 1e-8)
        steps = Minibatch(
            observation=jax.tree.map(lambda x: _merge(x[:, :unroll]), normalized),
            action=_merge(rollouts.extras["raw_action"][:, :unroll]),
            behaviour_log_prob=_merge(rollouts.extras["log_prob"][:, :unroll]),
            advantage=jax.lax.stop_gradient(_merge(advantages)),
            target_value=jax.lax.stop_gradient(_merge(target_values)),
            mask=_merge(mask),
        )
        (params, opt_state, _), metrics = jax.lax.scan(
            epoch, (state.params, state.opt_state, steps), jax.random.split(epochs_key, config.num_epochs)
        )
        dropped = state.dropped_rollouts + jnp.sum(~kept).astype(jnp.int32)
        new_state = TrainingState(
            params=params,
            opt_state=opt_state,
            observation_stats=stats,
            steps=state.steps + 1,
            random_key=key,
            dropped_rollouts=dropped,
        )
        acted_lag = jnp.where(acted, lag, 0)
        metrics = {
            **jax.tree.map(lambda x: x[-1, -1], metrics),  # the last minibatch's
            "mean_value": masked_mean(values[:, :unroll], acted),
            "policy_lag_mean": masked_mean(lag.astype(jnp.float32), acted),
            "policy_lag_max": jnp.max(acted_lag),
            "trained_policy_lag_max": jnp.max(jnp.where(mask, lag, 0)),  # over the rollouts kept
            "dropped_rollouts": dropped,
        }
        return new_state, metrics

    return update


def policy_variables(state: TrainingState) -> dict:
    """``"policy"``: the policy parameters, observation statistics and the learner step that made them."""
    return {
        "policy": (state.params["policy"], state.observation_stats, state.steps),
        "value": state.params["value"],
    }


PPO_LEARNER = LearnerDefinition(
    name="PPO",
    make_update=make_update,
    make_initial_state=make_initial_state,
    variables=policy_variables,
    finite_metrics=("policy_loss", "value_loss"),
    hint=lambda config: f"Lower learning_rate (now {config.learning_rate}) or check the rewards for NaNs.",
)
