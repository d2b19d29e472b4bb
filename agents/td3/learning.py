"""The TD3 learner: clipped double-Q learning with target-policy smoothing and delayed policy updates."""

from __future__ import annotations

from typing import Any, Iterator, Mapping, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax.learner import SGDLearner
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from acme.jax.targets import polyak_update
from acme.utils import counting, loggers
from agents.td3.config import TD3Config
from agents.td3.networks import TD3Networks


class TrainingState(NamedTuple):
    policy_params: Any
    critic_params: Any
    target_policy_params: Any
    target_critic_params: Any
    policy_opt_state: Any
    critic_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray  # learner steps taken so far
    random_key: jax.Array


def make_initial_state(networks: TD3Networks, config: TD3Config, key: jax.Array) -> TrainingState:
    """Fresh parameters, targets equal to them, and empty optimiser and observation statistics."""
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


def make_update(networks: TD3Networks, config: TD3Config):
    """``update(state, transitions) -> (state, metrics)``: one critic step, and on every
    ``policy_delay``-th learner step (the 1st, the ``policy_delay + 1``-th, ...) one policy
    step and a Polyak update of both targets."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)

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

    def policy_loss_fn(policy_params, critic_params, t: types.Transition):
        action = networks.policy.apply(policy_params, t.observation)
        q = networks.critic.apply(critic_params, t.observation, action)[0]  # the first critic, as in the paper
        return -jnp.mean(q)

    def policy_and_target_step(state: TrainingState, critic_params, t: types.Transition):
        policy_loss, policy_grads = jax.value_and_grad(policy_loss_fn)(state.policy_params, critic_params, t)
        policy_updates, policy_opt_state = optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)
        target_policy_params = polyak_update(policy_params, state.target_policy_params, config.tau)
        target_critic_params = polyak_update(critic_params, state.target_critic_params, config.tau)
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
        (critic_loss, mean_q), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, t, noise_key
        )
        critic_updates, critic_opt_state = optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        # Delayed updates: only one branch runs, so skipped steps cost no policy gradient.
        update_policy = state.steps % config.policy_delay == 0
        policy_params, policy_opt_state, target_policy_params, target_critic_params, policy_loss = jax.lax.cond(
            update_policy, policy_and_target_step, no_policy_step, state, critic_params, t
        )

        new_state = TrainingState(
            policy_params=policy_params,
            critic_params=critic_params,
            target_policy_params=target_policy_params,
            target_critic_params=target_critic_params,
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
            "policy_updated": update_policy.astype(jnp.float32),
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


class TD3Learner(SGDLearner):
    """TD3's learner: ``SGDLearner`` over TD3's state and update."""

    def __init__(
        self,
        networks: TD3Networks,
        config: TD3Config,
        random_key: jax.Array,
        iterator: Iterator[Any],
        counter: Optional[counting.Counter] = None,
        logger: Optional[loggers.Logger] = None,
    ):
        super().__init__(
            name="TD3",
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
