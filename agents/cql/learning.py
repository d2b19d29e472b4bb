"""The CQL learner: SAC's update (``agents.sac.learning.make_update``) with the conservative penalty added to its
critics' loss, and the penalty's weight tuned by a dual step."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import optax

from acme import types
from acme.jax import networks as networks_lib
from acme.jax.actor_critic import actor_critic_learner
from acme.jax.optimization import gradient_step
from agents.cql.config import CQLConfig
from agents.sac.learning import CriticRegulariser, TrainingState, make_update
from agents.sac.learning import make_initial_state as make_sac_state
from agents.sac.networks import SACNetworks

# SAC's state (agents.sac.learning.TrainingState, its fields in its order) and the conservative weight's, built
# from SAC's fields so that the two cannot drift apart; checkpoints store the fields by name.
CQLState = collections.namedtuple("CQLState", (*TrainingState._fields, "log_cql_weight", "cql_weight_opt_state"))


def make_initial_state(networks: SACNetworks, config: CQLConfig, key: jax.Array) -> CQLState:
    sac = make_sac_state(networks, config, key)
    log_weight = jnp.asarray(jnp.log(config.initial_cql_weight), jnp.float32)
    return CQLState(
        **sac._asdict(),
        log_cql_weight=log_weight,
        cql_weight_opt_state=optax.adam(config.learning_rate).init(log_weight),
    )


def conservative_gap(networks: SACNetworks, config: CQLConfig, critic_params, policy_params, t: types.Transition, key):
    """``[num_critics]``: per critic, the batch mean of ``logsumexp_a Q(s, a) - Q(s, a_dataset)``, the
    log-sum-exp estimated by importance sampling: ``N`` actions uniform in [-1, 1] (density 2^-d) and ``N`` of
    the policy's at ``s`` and at ``s'`` (their densities), ``N = num_action_samples``."""
    n, size = config.num_action_samples, networks.action_size
    uniform_key, current_key, next_key = jax.random.split(key, 3)
    batch = t.reward.shape[0]

    def repeat(observation):  # [B, ...] -> [N * B, ...], each state N times (sample-major)
        return jax.tree.map(lambda x: jnp.tile(x, (n,) + (1,) * (x.ndim - 1)), observation)

    states = repeat(t.observation)

    def policy_samples(observation, sample_key):
        mean, log_std = networks.policy.apply(policy_params, repeat(observation))
        action, log_prob = networks_lib.sample_tanh_gaussian(sample_key, mean, log_std)
        return jax.lax.stop_gradient(action), jax.lax.stop_gradient(log_prob)

    uniform = jax.random.uniform(uniform_key, (n * batch, size), minval=-1.0, maxval=1.0)
    current, current_log_prob = policy_samples(t.observation, current_key)
    following, following_log_prob = policy_samples(t.next_observation, next_key)
    log_uniform = -size * jnp.log(2.0)

    def q(actions):  # [num_critics, N, B]
        return networks.critic.apply(critic_params, states, actions).reshape(-1, n, batch)

    importance = jnp.concatenate(
        [
            q(uniform) - log_uniform,
            q(current) - current_log_prob.reshape(n, batch),
            q(following) - following_log_prob.reshape(n, batch),
        ],
        axis=1,
    )  # [num_critics, 3N, B]
    logsumexp = jax.nn.logsumexp(importance, axis=1) - jnp.log(3 * n)
    dataset_q = networks.critic.apply(critic_params, t.observation, t.action)  # [num_critics, B]
    return jnp.mean(logsumexp - dataset_q, axis=1)


def conservative_regulariser(networks: SACNetworks, config: CQLConfig) -> CriticRegulariser:
    optimizer = optax.adam(config.learning_rate)

    def loss(critic_params, state: CQLState, t: types.Transition, key):
        gap = conservative_gap(networks, config, critic_params, state.policy_params, t, key)
        weight = jnp.clip(jnp.exp(state.log_cql_weight), 0.0, config.max_cql_weight)
        return jax.lax.stop_gradient(weight) * jnp.sum(gap - config.target_action_gap), gap

    def weight_loss(log_weight, gap):  # the dual step: the weight grows while the gap exceeds its target
        weight = jnp.clip(jnp.exp(log_weight), 0.0, config.max_cql_weight)
        return -weight * jnp.mean(jax.lax.stop_gradient(gap) - config.target_action_gap)

    def step(state: CQLState, gap):
        _, _, log_weight, opt_state = gradient_step(
            weight_loss, optimizer, state.log_cql_weight, state.cql_weight_opt_state, gap, has_aux=False
        )
        changed = {"log_cql_weight": log_weight, "cql_weight_opt_state": opt_state}
        return changed, {"cql_gap": jnp.mean(gap), "cql_weight": jnp.exp(log_weight)}

    return CriticRegulariser(loss, step)


CQL_LEARNER = actor_critic_learner(
    "CQL",
    lambda networks, config: make_update(networks, config, conservative_regulariser(networks, config)),
    make_initial_state,
)
