"""The D4PG learner: categorical distributional TD on n-step transitions and a deterministic policy gradient."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import optax
import rlax

from acme import types
from acme.jax.actor_critic import ActorCriticState, actor_critic_learner, init_actor_critic_state, next_step
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import D4PGNetworks, expected_value

TrainingState = ActorCriticState  # the name older checkpoints stored


def make_initial_state(networks: D4PGNetworks, config: D4PGConfig, key: jax.Array) -> TrainingState:
    return init_actor_critic_state(networks, optax.adam(config.learning_rate), key)


def categorical_target(
    atoms: jnp.ndarray, reward: jnp.ndarray, discount: jnp.ndarray, next_logits: jnp.ndarray
) -> jnp.ndarray:
    """The target distribution ``reward + discount * Z'`` projected back onto ``atoms``.

    Args:
      atoms: the support, ``[num_atoms]``.
      reward: ``[B]`` n-step rewards.
      discount: ``[B]`` discounts as the adder wrote them (gamma^n times termination).
      next_logits: ``[B, num_atoms]`` logits of the target critic at the next state.

    Returns:
      ``[B, num_atoms]`` probabilities on ``atoms`` (each row sums to 1). Shifted
      atoms outside ``[vmin, vmax]`` put their mass on the nearest end.
    """
    chex.assert_rank([atoms, reward, discount, next_logits], [1, 1, 1, 2])
    chex.assert_equal_shape([reward, discount])
    chex.assert_axis_dimension(next_logits, 1, atoms.shape[0])
    next_probs = jax.nn.softmax(next_logits, axis=-1)

    def one(r, d, probs):
        return rlax.categorical_l2_project(r + d * atoms, probs, atoms)

    return jax.vmap(one)(reward, discount, next_probs)


def make_update(networks: D4PGNetworks, config: D4PGConfig):
    """``update(state, transitions) -> (state, metrics)``: one critic step, one policy step, Polyak targets."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)
    atoms = networks.atoms

    def critic_loss_fn(critic_params, state: TrainingState, t: types.Transition):
        next_action = networks.policy.apply(state.target_policy_params, t.next_observation)
        next_logits = networks.critic.apply(state.target_critic_params, t.next_observation, next_action)
        # The adder's discount already holds gamma^n and termination: no extra gamma here.
        target = jax.lax.stop_gradient(categorical_target(atoms, t.reward, t.discount, next_logits))
        logits = networks.critic.apply(critic_params, t.observation, t.action)
        loss = jnp.mean(-jnp.sum(target * jax.nn.log_softmax(logits, axis=-1), axis=-1))
        return loss, jnp.mean(expected_value(logits, atoms))

    def policy_loss_fn(policy_params, critic_params, t: types.Transition):
        # Deterministic policy gradient: ascend the critic's expected return at the policy's action,
        # with an optional L2 penalty that keeps the pre-tanh output out of tanh's flat tails.
        action, pre_tanh = networks.policy.apply(policy_params, t.observation, True)
        q = expected_value(networks.critic.apply(critic_params, t.observation, action), atoms)
        penalty = config.pre_tanh_penalty * jnp.mean(jnp.sum(jnp.square(pre_tanh), axis=-1))
        return -jnp.mean(q) + penalty, jnp.mean(jnp.abs(pre_tanh))

    def update(state: TrainingState, transitions: types.Transition):
        key, _ = jax.random.split(state.random_key)
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        critic = gradient_step(critic_loss_fn, optimizer, state.critic_params, state.critic_opt_state, state, t)
        policy = gradient_step(policy_loss_fn, optimizer, state.policy_params, state.policy_opt_state, critic.params, t)
        (critic_loss, mean_q), (policy_loss, mean_abs_pre_tanh) = critic.value, policy.value
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": policy_loss,
            "mean_q": mean_q,
            "mean_abs_pre_tanh": mean_abs_pre_tanh,  # 3 is an action of 0.995: much above, the policy saturates
            "policy_grad_norm": optax.tree_utils.tree_norm(policy.gradients),
            "critic_grad_norm": optax.tree_utils.tree_norm(critic.gradients),
        }
        new_state = next_step(
            state,
            stats,
            key,
            policy=policy,
            critic=critic,
            target_policy_params=optax.incremental_update(policy.params, state.target_policy_params, config.tau),
            target_critic_params=optax.incremental_update(critic.params, state.target_critic_params, config.tau),
        )
        return new_state, metrics

    return update


def _hint(config: D4PGConfig) -> str:
    return (
        f"Lower learning_rate (now {config.learning_rate}), check that [vmin, vmax] = "
        f"[{config.vmin}, {config.vmax}] covers the returns, or check the rewards for NaNs."
    )


D4PG_LEARNER = actor_critic_learner("D4PG", make_update, make_initial_state, hint=_hint)
