"""The TD3+BC learner: TD3's update (``agents.td3.learning.make_update``) with a behaviour-cloning policy loss."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from acme import types
from acme.jax.actor_critic import actor_critic_learner
from agents.td3.learning import make_initial_state, make_update
from agents.td3.networks import TD3Networks
from agents.td3_bc.config import TD3BCConfig


def behaviour_regularised_policy_loss(networks: TD3Networks, config: TD3BCConfig):
    """``-lambda * mean Q1(s, pi(s)) + mean_batch sum_dims (pi(s) - a)^2``, ``lambda = alpha / mean |Q1(s, pi(s))|``
    (no gradient through lambda)."""

    def policy_loss_fn(policy_params, critic_params, t: types.Transition):
        action = networks.policy.apply(policy_params, t.observation)
        q = networks.critic.apply(critic_params, t.observation, action)[0]
        weight = jax.lax.stop_gradient(config.alpha / (jnp.mean(jnp.abs(q)) + 1e-8))
        behaviour_cloning = jnp.mean(jnp.sum(jnp.square(action - t.action), axis=-1))
        return -weight * jnp.mean(q) + behaviour_cloning

    return policy_loss_fn


TD3_BC_LEARNER = actor_critic_learner(
    "TD3+BC",
    functools.partial(make_update, make_policy_loss=behaviour_regularised_policy_loss),
    make_initial_state,
)
