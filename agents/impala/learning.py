"""The IMPALA learner: V-trace value targets and an importance-weighted policy gradient, as a loss for the
shared ``SGDLearner``.

One learner step is one gradient step on a batch of ``B`` rollouts
``[B, T + 1]`` (episodes joined in one stream; see ``acme.jax.sequences``).
The importance weights ``pi / mu`` compare the learner's policy with the
behaviour policy's log-probabilities stored by the actor; V-trace truncates
them (``clip_rho_threshold``, ``clip_pg_rho_threshold``), which is what lets
actors act on parameters several learner steps old. The loss is
``-log pi * A_pg + baseline_coef * 0.5 (v_s - V)^2 - entropy_coef * H`` over
the acted steps of the rollouts within the policy-lag bound
(``acme.jax.on_policy``), with the rewards multiplied by ``reward_scale``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from acme.jax.learner import LearnerDefinition
from acme.jax.on_policy import (
    OnPolicyState,
    init_on_policy_state,
    lag_mask,
    merge_leading,
    next_on_policy_state,
    on_policy_variables,
    policy_value_over_time,
)
from acme.jax.optimization import clipped_adam, gradient_step
from acme.jax.policy_value import PolicyValueNetworks, RecurrentPolicyValueNetworks
from acme.jax.running_statistics import ObservationNormalizer
from acme.jax.sequences import batched_vtrace, masked_mean
from agents.impala.config import IMPALAConfig

TrainingState = OnPolicyState


def make_update(networks: PolicyValueNetworks | RecurrentPolicyValueNetworks, config: IMPALAConfig):
    """``update(state, rollouts) -> (state, metrics)``: one V-trace actor-critic step."""
    optimizer = clipped_adam(config)
    normalizer = ObservationNormalizer(config.normalize_observations)

    def loss_fn(params, rollouts, observations, lags):
        unroll = rollouts.reward.shape[1] - 1
        policy_output, values = policy_value_over_time(networks, params, rollouts, observations)  # [B, T + 1]
        distribution = networks.distribution(jax.tree.map(lambda x: x[:, :unroll], policy_output))
        log_prob = distribution.log_prob(rollouts.extras["raw_action"][:, :unroll])
        rhos = jnp.exp(jax.lax.stop_gradient(log_prob) - rollouts.extras["log_prob"][:, :unroll])
        vtrace = batched_vtrace(
            values,
            config.reward_scale * rollouts.reward[:, :unroll].astype(jnp.float32),
            config.discount * rollouts.discount[:, :unroll].astype(jnp.float32),
            rhos,
            lags.is_final,
            config.vtrace_lambda,
            config.clip_rho_threshold,
            config.clip_pg_rho_threshold,
        )
        policy_loss = -masked_mean(log_prob * jax.lax.stop_gradient(vtrace.pg_advantage), lags.mask)
        baseline_loss = masked_mean(0.5 * jnp.square(vtrace.errors), lags.mask)
        entropy = masked_mean(distribution.entropy(), lags.mask)
        loss = policy_loss + config.baseline_coef * baseline_loss - config.entropy_coef * entropy
        metrics = {
            "policy_loss": policy_loss,
            "baseline_loss": baseline_loss,
            "entropy": entropy,
            "mean_value": masked_mean(values[:, :unroll], lags.mask),
            "mean_rho": masked_mean(rhos, lags.mask),
        }
        return loss, metrics

    def update(state: TrainingState, rollouts) -> tuple[TrainingState, dict]:
        unroll = rollouts.reward.shape[1] - 1
        lags = lag_mask(state.steps, rollouts, config.max_policy_lag)
        acted_observations = jax.tree.map(lambda x: merge_leading(x[:, :unroll]), rollouts.observation)
        stats = normalizer.update(state.observation_stats, acted_observations)
        observations = normalizer.apply(stats, rollouts.observation)
        (_, metrics), _, params, opt_state = gradient_step(
            loss_fn, optimizer, state.params, state.opt_state, rollouts, observations, lags
        )
        new_state, lagged = next_on_policy_state(state, params, opt_state, stats, state.random_key, lags)
        return new_state, {**metrics, **lagged}

    return update


IMPALA_LEARNER = LearnerDefinition(
    name="IMPALA",
    make_update=make_update,
    make_initial_state=init_on_policy_state,
    variables=on_policy_variables,
    finite_metrics=("policy_loss", "baseline_loss"),
    hint=lambda config: f"Lower learning_rate (now {config.learning_rate}) or check the rewards for NaNs.",
)
