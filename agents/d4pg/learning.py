"""The D4PG learner: categorical distributional TD on n-step transitions and a deterministic policy gradient."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax
import rlax

from acme import types
from acme.jax.learner import SGDLearner
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from acme.jax.targets import polyak_update
from acme.utils import counting, loggers
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import D4PGNetworks, expected_value


class TrainingState(NamedTuple):
    policy_params: Any
    critic_params: Any
    target_policy_params: Any
    target_critic_params: Any
    policy_opt_state: Any
    critic_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray
    random_key: jax.Array


def make_initial_state(networks: D4PGNetworks, config: D4PGConfig, key: jax.Array) -> TrainingState:
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.init_policy(policy_key)
    critic_params = networks.init_critic(critic_key)
    optimizer = optax.adam(config.learning_rate)
    return TrainingState(
        policy_params=policy_params,
        critic_params=critic_params,
        target_policy_params=policy_params,
        target_critic_params=critic_params,
        policy_opt_state=optimizer.init(policy_params),
        critic_opt_state=optimizer.init(critic_params),
        observation_stats=ObservationNormalizer().init(networks.environment_spec.observations),
        steps=jnp.zeros((), jnp.int32),
        random_key=state_key,
    )


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
        (critic_loss, mean_q), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, t
        )
        critic_updates, critic_opt_state = optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        (policy_loss, mean_abs_pre_tanh), policy_grads = jax.value_and_grad(policy_loss_fn, has_aux=True)(
            state.policy_params, critic_params, t
        )
        policy_updates, policy_opt_state = optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)

        new_state = TrainingState(
            policy_params=policy_params,
            critic_params=critic_params,
            target_policy_params=polyak_update(policy_params, state.target_policy_params, config.tau),
            target_critic_params=polyak_update(critic_params, state.target_critic_params, config.tau),
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            observation_stats=stats,
            steps=state.steps + 1,
            random_key=key,
        )
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": policy_loss,
            "mean_q": mean_q,
            "mean_abs_pre_tanh": mean_abs_pre_tanh,  # 3 is an action of 0.995: much above, the policy saturates
            "policy_grad_norm": optax.tree_utils.tree_norm(policy_grads),
            "critic_grad_norm": optax.tree_utils.tree_norm(critic_grads),
        }
        return new_state, metrics

    return update


def policy_variables(state: TrainingState) -> dict:
    """What actors and snapshots need: the policy parameters and observation statistics."""
    return {
        "policy": (state.policy_params, state.observation_stats),
        "critic": state.critic_params,
        "target_policy": state.target_policy_params,
        "target_critic": state.target_critic_params,
    }


class D4PGLearner(SGDLearner):
    """D4PG's learner: ``SGDLearner`` over D4PG's state and update."""

    def __init__(
        self,
        networks: D4PGNetworks,
        config: D4PGConfig,
        random_key: jax.Array,
        iterator: Iterator[Any],
        counter: Optional[counting.Counter] = None,
        logger: Optional[loggers.Logger] = None,
    ):
        super().__init__(
            name="D4PG",
            update=make_update(networks, config),
            initial_state=make_initial_state(networks, config, random_key),
            iterator=iterator,
            variables=policy_variables,
            num_updates_per_step=config.num_sgd_steps_per_step,
            counter=counter,
            logger=logger,
            finite_metrics=("critic_loss", "policy_loss"),
            hint=(
                f"Lower learning_rate (now {config.learning_rate}), check that [vmin, vmax] = "
                f"[{config.vmin}, {config.vmax}] covers the returns, or check the rewards for NaNs."
            ),
        )
