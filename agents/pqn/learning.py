"""The PQN learner: Q(lambda) regression on a batch of rollouts, in epochs of minibatches, no target network.

One learner step takes ``B`` rollouts ``[B, T + 1]`` from the queue (episodes
joined in one stream; see ``acme.jax.sequences``), computes the targets once
with the current network (``G_t = r_t + discount_t ((1 - lambda) max_a
Q(x_{t+1}, a) + lambda G_{t+1})``), and runs ``num_epochs`` shuffled passes of
``num_minibatches`` minibatch steps on ``(Q(x_t, a_t) - G_t)^2 / 2``.
Episodes' final steps (no action was taken there) carry no loss. Policy lag
is reported and bounded as for every rollout learner (``acme.jax.on_policy``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acme.agents.q_learning import QNetworks
from acme.jax.learner import LearnerDefinition
from acme.jax.on_policy import (
    OnPolicyState,
    apply_over_time,
    init_on_policy_state,
    lag_mask,
    merge_leading,
    minibatch_epochs,
    next_on_policy_state,
)
from acme.jax.optimization import clipped_adam
from acme.jax.running_statistics import ObservationNormalizer
from acme.jax.sequences import batched_lambda_returns, masked_mean
from agents.pqn.config import PQNConfig

TrainingState = OnPolicyState  # params: the Q-network's


class Minibatch(NamedTuple):
    observation: Any
    action: jnp.ndarray
    target: jnp.ndarray
    mask: jnp.ndarray


def make_update(networks: QNetworks, config: PQNConfig):
    """``update(state, rollouts) -> (state, metrics)``: Q(lambda) targets, then the epochs of minibatch steps."""
    optimizer = clipped_adam(config)
    normalizer = ObservationNormalizer(config.normalize_observations)
    apply = networks.q_network.apply

    def loss_fn(params, batch: Minibatch):
        q_values = apply(params, batch.observation)
        taken = jnp.take_along_axis(q_values, batch.action[:, None], axis=-1)[:, 0]
        loss = 0.5 * masked_mean(jnp.square(taken - batch.target), batch.mask)
        return loss, {"loss": loss}

    def update(state: TrainingState, rollouts) -> tuple[TrainingState, dict]:
        key, epochs_key = jax.random.split(state.random_key)
        unroll = rollouts.reward.shape[1] - 1
        lags = lag_mask(state.steps, rollouts, config.max_policy_lag)
        observations = jax.tree.map(lambda x: x[:, :unroll], rollouts.observation)
        stats = normalizer.update(state.observation_stats, jax.tree.map(merge_leading, observations))
        normalized = normalizer.apply(stats, rollouts.observation)
        values = jnp.max(apply_over_time(apply, state.params, normalized), axis=-1)  # [B, T + 1]
        discounts = config.discount * rollouts.discount[:, :unroll].astype(jnp.float32)
        rewards = config.reward_scale * rollouts.reward[:, :unroll].astype(jnp.float32)
        targets = batched_lambda_returns(rewards, discounts, values, lags.is_final, config.q_lambda)
        steps = Minibatch(
            observation=jax.tree.map(lambda x: merge_leading(x[:, :unroll]), normalized),
            action=merge_leading(rollouts.action[:, :unroll]).astype(jnp.int32),
            target=jax.lax.stop_gradient(merge_leading(targets)),
            mask=merge_leading(lags.mask),
        )
        params, opt_state, metrics = minibatch_epochs(
            loss_fn,
            optimizer,
            state.params,
            state.opt_state,
            steps,
            epochs_key,
            config.num_epochs,
            config.num_minibatches,
        )
        new_state, lagged = next_on_policy_state(state, params, opt_state, stats, key, lags)
        metrics = {
            **metrics,  # the last minibatch's
            "mean_q": masked_mean(values[:, :unroll], ~lags.is_final),
            "mean_target": masked_mean(targets, lags.mask),
            **lagged,
        }
        return new_state, metrics

    return update


def pqn_variables(state: TrainingState) -> dict:
    """``"policy"``: the Q-network's parameters, the observation statistics and the learner step that made them."""
    return {"policy": (state.params, state.observation_stats, state.steps)}


PQN_LEARNER = LearnerDefinition(
    name="PQN",
    make_update=make_update,
    make_initial_state=lambda networks, config, key: init_on_policy_state(
        networks, config, key, networks.observation_spec
    ),
    variables=pqn_variables,
    finite_metrics=("loss",),
    hint=lambda config: (
        f"Lower learning_rate (now {config.learning_rate}), keep layer_norm on (now {config.layer_norm}), or check "
        "the rewards for NaNs."
    ),
)
