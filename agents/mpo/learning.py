"""The MPO learner: expected-value TD for the critic, an E-step and a KL-constrained M-step for the policy.

One update does, on a batch of n-step transitions ``(s, a, r, d, s')``:

1. Sample ``num_samples`` actions per next state from the *target* policy and
   value them with the *target* critic: ``Q[N, B]``.
2. Critic: regress ``Q(s, a)`` on ``r + d * mean_N Q_target(s', a_n)`` (the
   adder's ``d`` already holds ``gamma^n`` and termination).
3. E-step on the same states ``s'`` and samples: weights
   ``softmax_N(Q / temperature)``, the temperature minimising the dual
   ``temperature * epsilon + temperature * mean_B log mean_N exp(Q / temperature)``,
   so that ``KL(weights || uniform) ~ epsilon``.
4. M-step: weighted maximum likelihood of the sampled actions under the online
   policy, split into a mean part (online mean, target std) and a std part
   (target mean, online std), each held within ``epsilon_mean`` /
   ``epsilon_stddev`` of the target policy by a Lagrange multiplier learnt by
   gradient.
   An optional L2 penalty on the mean before tanh (``pre_tanh_penalty``) keeps
   it out of tanh's flat tails.
5. Polyak-average the target policy and critic towards the online ones.

Reusing the critic target's samples for the policy step halves the most
expensive part of the update (``num_samples * batch_size`` critic forwards).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from acme import types
from acme.jax import networks as networks_lib
from acme.jax.actor_critic import actor_critic_fields, actor_critic_learner, next_step
from acme.jax.optimization import apply_gradients, gradient_step
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from agents.mpo.config import MPOConfig
from agents.mpo.networks import MPONetworks

_MIN_DUAL = 1e-8  # floor added to every softplus-positive dual variable


class DualVariables(NamedTuple):
    """Unconstrained parameters of the dual variables; the values are ``softplus(raw) + 1e-8``."""

    temperature: jnp.ndarray  # scalar
    alpha_mean: jnp.ndarray  # [action_size] if per-dimension constraints, else scalar
    alpha_stddev: jnp.ndarray  # same shape as alpha_mean


class TrainingState(NamedTuple):
    policy_params: Any
    critic_params: Any
    target_policy_params: Any
    target_critic_params: Any
    dual_params: DualVariables
    policy_opt_state: Any
    critic_opt_state: Any
    dual_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray
    random_key: jax.Array


def inverse_softplus(x: float) -> float:
    """The ``y`` with ``softplus(y) == x`` (``x > 0``)."""
    return float(np.log(np.expm1(x)))


def positive(raw: jnp.ndarray) -> jnp.ndarray:
    """A dual variable's value from its unconstrained parameter."""
    return jax.nn.softplus(raw) + _MIN_DUAL


def e_step(
    q_values: jnp.ndarray, temperature: jnp.ndarray, epsilon: float
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Non-parametric improved policy over sampled actions, and the temperature's dual loss.

    Args:
      q_values: ``[num_samples, batch]`` values of actions sampled from the target policy.
      temperature: a positive scalar; only the returned loss is differentiable in it.
      epsilon: the bound on ``KL(improved || target)``, estimated over the samples.

    Returns:
      ``(weights [num_samples, batch], temperature_loss, kl)``: weights sum to 1
      over the samples of each state; ``d temperature_loss / d temperature =
      epsilon - kl``, so minimising it lowers the temperature while the
      weights' KL is under the bound and raises it when over.
    """
    q_values = jax.lax.stop_gradient(q_values)
    num_samples = q_values.shape[0]
    weights = jax.nn.softmax(q_values / jax.lax.stop_gradient(temperature), axis=0)
    log_mean_exp = jax.nn.logsumexp(q_values / temperature, axis=0) - jnp.log(num_samples)
    temperature_loss = temperature * epsilon + temperature * jnp.mean(log_mean_exp)
    kl = jnp.mean(jnp.sum(weights * jnp.log(num_samples * weights + 1e-12), axis=0))
    return jax.lax.stop_gradient(weights), temperature_loss, kl


def gaussian_kl(mean_p: jnp.ndarray, std_p: jnp.ndarray, mean_q: jnp.ndarray, std_q: jnp.ndarray) -> jnp.ndarray:
    """``KL(N(mean_p, std_p) || N(mean_q, std_q))`` per dimension (no sum)."""
    return jnp.log(std_q / std_p) + (jnp.square(std_p) + jnp.square(mean_p - mean_q)) / (2.0 * jnp.square(std_q)) - 0.5


def m_step(
    online: tuple[jnp.ndarray, jnp.ndarray],
    target: tuple[jnp.ndarray, jnp.ndarray],
    actions: jnp.ndarray,
    weights: jnp.ndarray,
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Decoupled weighted maximum-likelihood losses and KLs of the online policy against the target.

    Args:
      online: ``(mean, std)`` of the online policy, ``[batch, action_size]``.
      target: ``(mean, std)`` of the target policy, same shapes (not differentiated).
      actions: ``[num_samples, batch, action_size]`` actions sampled from the target policy.
      weights: ``[num_samples, batch]`` E-step weights.

    Returns:
      ``(loss_mean, loss_stddev, kl_mean, kl_stddev)``: the losses fit the mean
      (with the target std) and the std (with the target mean) separately; the
      KLs to the target are per action dimension, averaged over the batch.
    """
    online_mean, online_std = online
    target_mean, target_std = jax.tree.map(jax.lax.stop_gradient, target)
    log_prob_mean = networks_lib.gaussian_log_prob(actions, online_mean[None], jnp.log(target_std)[None])
    log_prob_std = networks_lib.gaussian_log_prob(actions, target_mean[None], jnp.log(online_std)[None])
    loss_mean = -jnp.mean(jnp.sum(weights * log_prob_mean, axis=0))
    loss_std = -jnp.mean(jnp.sum(weights * log_prob_std, axis=0))
    kl_mean = jnp.mean(gaussian_kl(target_mean, target_std, online_mean, target_std), axis=0)
    kl_std = jnp.mean(gaussian_kl(target_mean, target_std, target_mean, online_std), axis=0)
    return loss_mean, loss_std, kl_mean, kl_std


def kl_constraint(kl: jnp.ndarray, raw_alpha: jnp.ndarray, epsilon: float, per_dim: bool):
    """``(penalty, alpha_loss)`` of a Lagrangian KL constraint ``kl <= epsilon``.

    The penalty ``alpha * kl`` trains the policy with alpha held fixed; the
    dual loss ``alpha * (epsilon - kl)`` trains alpha with kl held fixed, so
    alpha grows while the constraint is violated and shrinks otherwise.
    ``kl`` is per dimension; without ``per_dim`` it is summed first.
    """
    if not per_dim:
        kl = jnp.sum(kl)
    alpha = positive(raw_alpha)
    penalty = jnp.sum(jax.lax.stop_gradient(alpha) * kl)
    alpha_loss = jnp.sum(alpha * (epsilon - jax.lax.stop_gradient(kl)))
    return penalty, alpha_loss


def _optimizers(config: MPOConfig) -> tuple[optax.GradientTransformation, optax.GradientTransformation]:
    network = optax.chain(optax.clip_by_global_norm(config.grad_norm_clip), optax.adam(config.learning_rate))
    return network, optax.adam(config.dual_learning_rate)


def make_initial_state(networks: MPONetworks, config: MPOConfig, key: jax.Array) -> TrainingState:
    alpha_shape = (networks.action_size,) if config.per_dim_constraining else ()
    duals = DualVariables(
        temperature=jnp.asarray(inverse_softplus(config.initial_temperature), jnp.float32),
        alpha_mean=jnp.full(alpha_shape, inverse_softplus(config.initial_alpha_mean), jnp.float32),
        alpha_stddev=jnp.full(alpha_shape, inverse_softplus(config.initial_alpha_stddev), jnp.float32),
    )
    network_optimizer, dual_optimizer = _optimizers(config)
    return TrainingState(
        **actor_critic_fields(networks, network_optimizer, key),
        dual_params=duals,
        dual_opt_state=dual_optimizer.init(duals),
    )


def _repeat(nest: Any, num: int) -> Any:
    """``[B, ...] -> [num * B, ...]``, the batch repeated ``num`` times (sample-major)."""
    return jax.tree.map(lambda x: jnp.broadcast_to(x[None], (num, *x.shape)).reshape((-1, *x.shape[1:])), nest)


def make_update(networks: MPONetworks, config: MPOConfig):
    """``update(state, transitions) -> (state, metrics)``: one step of the critic, policy and duals."""
    network_optimizer, dual_optimizer = _optimizers(config)
    normalizer = ObservationNormalizer(config.normalize_observations)
    num_samples = config.num_samples

    def critic_loss_fn(critic_params, t: types.Transition, next_value: jnp.ndarray):
        # The adder's discount already holds gamma^n and termination.
        target = jax.lax.stop_gradient(config.reward_scale * t.reward + t.discount * next_value)
        q = networks.critic.apply(critic_params, t.observation, t.action)  # [num_critics, B]
        loss = 0.5 * jnp.mean(jnp.sum(jnp.square(q - target), axis=0))
        return loss, jnp.mean(q)

    def policy_loss_fn(policy_params, duals: DualVariables, observation, target_policy, actions, q_values):
        weights, temperature_loss, kl_q = e_step(q_values, positive(duals.temperature), config.epsilon)
        online_mean, online_std, pre_tanh = networks.policy.apply(policy_params, observation, True)
        online = (online_mean, online_std)
        loss_mean, loss_std, kl_mean, kl_std = m_step(online, target_policy, actions, weights)
        pre_tanh_penalty = config.pre_tanh_penalty * jnp.mean(jnp.sum(jnp.square(pre_tanh), axis=-1))
        penalty_mean, alpha_mean_loss = kl_constraint(
            kl_mean, duals.alpha_mean, config.epsilon_mean, config.per_dim_constraining
        )
        penalty_std, alpha_std_loss = kl_constraint(
            kl_std, duals.alpha_stddev, config.epsilon_stddev, config.per_dim_constraining
        )
        policy_loss = loss_mean + loss_std + penalty_mean + penalty_std + pre_tanh_penalty
        dual_loss = temperature_loss + alpha_mean_loss + alpha_std_loss
        aux = {
            "policy_loss": policy_loss,
            "dual_loss": dual_loss,
            "kl_q": kl_q,
            "kl_mean": jnp.sum(kl_mean),
            "kl_stddev": jnp.sum(kl_std),
            "policy_std": jnp.mean(online_std),
            "mean_abs_pre_tanh": jnp.mean(jnp.abs(pre_tanh)),  # 3 is a mean of 0.995; far above, it saturates
        }
        # Cross terms are stopped, so one gradient serves the policy and the duals.
        return policy_loss + dual_loss, aux

    def update(state: TrainingState, transitions: types.Transition):
        key, sample_key = jax.random.split(state.random_key)
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        batch_size = t.reward.shape[0]

        # Actions sampled from the target policy at the next states, valued by the target critic.
        target_mean, target_std = networks.policy.apply(state.target_policy_params, t.next_observation)
        noise = jax.random.normal(sample_key, (num_samples, *target_mean.shape), target_mean.dtype)
        actions = target_mean[None] + target_std[None] * noise  # [N, B, A]
        q_values = networks.critic.apply(
            state.target_critic_params,
            _repeat(t.next_observation, num_samples),
            jnp.clip(actions, -1.0, 1.0).reshape((num_samples * batch_size, -1)),
        )
        q_values = jnp.min(q_values, axis=0).reshape((num_samples, batch_size))  # [N, B]

        critic = gradient_step(
            critic_loss_fn,
            network_optimizer,
            state.critic_params,
            state.critic_opt_state,
            t,
            jnp.mean(q_values, axis=0),
        )
        critic_loss, mean_q = critic.value

        (_, aux), (policy_grads, dual_grads) = jax.value_and_grad(policy_loss_fn, argnums=(0, 1), has_aux=True)(
            state.policy_params,
            state.dual_params,
            t.next_observation,
            (target_mean, target_std),
            actions,
            q_values,
        )
        policy_params, policy_opt_state = apply_gradients(
            network_optimizer, policy_grads, state.policy_params, state.policy_opt_state
        )
        duals, dual_opt_state = apply_gradients(dual_optimizer, dual_grads, state.dual_params, state.dual_opt_state)

        new_state = next_step(
            state,
            stats,
            key,
            policy_params=policy_params,
            policy_opt_state=policy_opt_state,
            critic=critic,
            target_policy_params=optax.incremental_update(policy_params, state.target_policy_params, config.tau),
            target_critic_params=optax.incremental_update(critic.params, state.target_critic_params, config.tau),
            dual_params=duals,
            dual_opt_state=dual_opt_state,
        )
        metrics = {
            "critic_loss": critic_loss,
            "mean_q": mean_q,
            **aux,
            "temperature": positive(duals.temperature),
            "alpha_mean": jnp.mean(positive(duals.alpha_mean)),
            "alpha_stddev": jnp.mean(positive(duals.alpha_stddev)),
        }
        return new_state, metrics

    return update


MPO_LEARNER = actor_critic_learner("MPO", make_update, make_initial_state)
