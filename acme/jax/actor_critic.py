"""What actor-critic learners share: the state of TD3 and D4PG, the fields every one starts with, the step from
one state to the next (Polyak targets included), the variables served, and the learner definition."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from acme.jax.learner import LearnerDefinition
from acme.jax.optimization import OptimizerStep
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics


class ActorCriticState(NamedTuple):
    """A policy and a critic, their targets (Polyak averages) and optimiser states, observation statistics."""

    policy_params: Any
    critic_params: Any
    target_policy_params: Any
    target_critic_params: Any
    policy_opt_state: Any
    critic_opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray  # learner steps taken so far
    random_key: jax.Array


def actor_critic_fields(networks: Any, optimizer: optax.GradientTransformation, key: jax.Array) -> dict[str, Any]:
    """The fields every actor-critic's starting state has: fresh parameters from ``networks.init_policy`` /
    ``init_critic``, targets equal to them, empty optimiser states and observation statistics (for
    ``networks.environment_spec``'s observations), step 0 and a random key, all from ``key``."""
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.init_policy(policy_key)
    critic_params = networks.init_critic(critic_key)
    return dict(
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


def init_actor_critic_state(networks: Any, optimizer: optax.GradientTransformation, key: jax.Array) -> ActorCriticState:
    """An ``ActorCriticState`` with ``actor_critic_fields``."""
    return ActorCriticState(**actor_critic_fields(networks, optimizer, key))


def actor_critic_variables(state: Any) -> dict:
    """What actors and snapshots need (``"policy"``: the policy parameters with the observation statistics), and
    the critic and whichever target networks ``state`` has (a target policy comes with the statistics too)."""
    variables = {"policy": (state.policy_params, state.observation_stats), "critic": state.critic_params}
    if "target_policy_params" in state._fields:
        variables["target_policy"] = (state.target_policy_params, state.observation_stats)
    if "target_critic_params" in state._fields:
        variables["target_critic"] = state.target_critic_params
    return variables


def learning_rate_hint(config: Any) -> str:
    """The advice an actor-critic learner adds to its error when a loss stops being finite."""
    return f"Lower learning_rate (now {config.learning_rate}) or reward_scale, or check the rewards for NaNs."


def next_step(
    state: Any,
    stats: RunningStatistics,
    key: jax.Array,
    *,
    policy: OptimizerStep | None = None,
    critic: OptimizerStep | None = None,
    **changed: Any,
) -> Any:
    """``state`` after one update: the ``changed`` fields (targets, other parameters), the new policy and critic
    parameters and optimiser states of the ``OptimizerStep``\\ s given, and the next step count, random key and
    observation statistics, which every actor-critic update advances alike."""
    if policy is not None:
        changed.update(policy_params=policy.params, policy_opt_state=policy.opt_state)
    if critic is not None:
        changed.update(critic_params=critic.params, critic_opt_state=critic.opt_state)
    return state._replace(observation_stats=stats, steps=state.steps + 1, random_key=key, **changed)


def actor_critic_learner(
    name: str,
    make_update: Any,
    make_initial_state: Any,
    variables: Any = actor_critic_variables,
    hint: Any = learning_rate_hint,
) -> LearnerDefinition:
    """The ``LearnerDefinition`` of an actor-critic: its critic and policy losses must stay finite."""
    return LearnerDefinition(name, make_update, make_initial_state, variables, ("critic_loss", "policy_loss"), hint)
