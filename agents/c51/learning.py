"""The C51 loss: categorical double Q-learning (``rlax.categorical_double_q_learning``) on n-step transitions, on
the DQN family's shared learner. The target distribution is the target network's at the action the online network
picks, shifted by the n-step reward, scaled by the bootstrap discount and projected onto the atoms; the loss is its
cross-entropy with the online distribution, which is also the new priority."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import rlax

from acme import types
from acme.agents.q_learning import QNetworks, q_learner
from agents.c51.config import C51Config
from agents.c51.networks import atoms, q_values


def make_losses(networks: QNetworks, config: C51Config):
    q_apply = networks.q_network.apply
    support = atoms(config)

    def losses(params, target_params, transitions: types.Transition):
        logits_t, selector_logits_t = jax.lax.stop_gradient(
            (q_apply(target_params, transitions.next_observation), q_apply(params, transitions.next_observation))
        )
        logits_tm1 = q_apply(params, transitions.observation)
        cross_entropy = jax.vmap(rlax.categorical_double_q_learning, in_axes=(None, 0, 0, 0, 0, None, 0, 0))(
            support,
            logits_tm1,
            transitions.action.astype(jnp.int32),
            transitions.reward.astype(jnp.float32),
            transitions.discount.astype(jnp.float32),
            support,
            logits_t,
            q_values(selector_logits_t, config),
        )
        return cross_entropy, cross_entropy, jnp.mean(q_values(logits_tm1, config))

    return losses


C51_LEARNER = q_learner("C51", make_losses)
