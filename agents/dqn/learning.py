"""The DQN learner: double Q-learning on n-step transitions, as a loss for the DQN family's shared learner."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import rlax

from acme import types
from acme.agents.q_learning import q_learner
from acme.jax.value_learning import TargetNetworkState
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks

TrainingState = TargetNetworkState


def make_losses(networks: DQNNetworks, config: DQNConfig):
    """Per transition, the Huber loss of the double-Q-learning TD error, and ``|td|`` as its new priority.

    Targets use the adder's n-step reward and discount (the discount already
    holds gamma^n and any termination), the online network to choose the next
    action and the target network to value it.
    """
    q_apply = networks.q_network.apply

    def losses(params, target_params, transitions: types.Transition):
        # The next state's values take no gradient: computed outside the differentiated part of the step.
        q_t_value, q_t_selector = jax.lax.stop_gradient(
            (q_apply(target_params, transitions.next_observation), q_apply(params, transitions.next_observation))
        )
        q_tm1 = q_apply(params, transitions.observation)
        td_error = jax.vmap(rlax.double_q_learning)(
            q_tm1,
            transitions.action.astype(jnp.int32),
            transitions.reward.astype(jnp.float32),
            transitions.discount.astype(jnp.float32),
            q_t_value,
            q_t_selector,
        )
        return rlax.huber_loss(td_error, config.huber_loss_delta), jnp.abs(td_error), jnp.mean(q_tm1)

    return losses


DQN_LEARNER = q_learner("DQN", make_losses)
