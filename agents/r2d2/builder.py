"""R2D2's sequence replay, recurrent actor, learner and policy, on the n-step builder's replay and dataset."""

from __future__ import annotations

from typing import Any

import distrax
import jax
import jax.numpy as jnp
import numpy as np

from acme import adders, specs
from acme.adders.reward_clipping import clip_rewards
from acme.agents import exploration
from acme.agents.transition_builder import NStepTransitionBuilder
from acme.jax.actors import RecurrentPolicy
from agents.r2d2.config import R2D2Config
from agents.r2d2.learning import R2D2_LEARNER
from agents.r2d2.networks import R2D2Networks


class R2D2Builder(NStepTransitionBuilder):
    """R2D2: prioritized replay of fixed-length sequences (with the actor's recurrent state), an LSTM Q-network
    acting epsilon-greedily, per-actor epsilons in distributed runs."""

    config_class = R2D2Config
    learner = R2D2_LEARNER

    def for_actor(self, actor_id: int, num_actors: int) -> "R2D2Builder":
        config = exploration.for_actor(self.config, actor_id, num_actors)
        return self if config is self.config else R2D2Builder(config)

    def extras_spec(self) -> dict:
        """What the actor stores with each step: whether it chose the action, and its recurrent state before."""
        state = specs.Array((self.config.lstm_size,), np.float32)
        return {"acted": specs.Array((), np.bool_), "core_state": {"hidden": state, "cell": state}}

    def replay_signature(self, environment_spec: specs.EnvironmentSpec) -> Any:
        return adders.SequenceAdder.signature(environment_spec, self.config.sequence_length, self.extras_spec())

    def zero_padded_sequences(self) -> tuple[int, int]:
        return self.config.sequence_length, self.config.sequence_period

    def make_adder(self, replay_client: Any, environment_spec: specs.EnvironmentSpec, policy: Any = None):
        length, period = self.zero_padded_sequences()
        adder = adders.SequenceAdder(
            client=replay_client,
            sequence_length=length,
            period=period,
            priority_fns={self.config.replay_table_name: None},
            pad_end_of_episode=True,
            break_end_of_episode=True,
        )
        return clip_rewards(adder, self.config.max_abs_reward)

    def check_vector_acting(self, num_envs: int) -> None:
        """One environment per actor: R2D2's sequence adder is untested with K environments per actor. (Without
        adders, the evaluator's episodes side by side, ``make_actor`` gives a ``RecurrentVectorActor``.)"""
        if num_envs > 1:
            raise NotImplementedError(
                "R2D2 acts with one environment per actor: use num_envs_per_actor=1, and more actors in a "
                "distributed run."
            )

    def check_networks(self, networks, environment_spec: specs.EnvironmentSpec) -> None:
        check_networks(networks, environment_spec, self.config)

    def make_policy(
        self, networks: R2D2Networks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False
    ) -> RecurrentPolicy:
        self.check_networks(networks, environment_spec)
        config = self.config
        action_dtype = environment_spec.actions.dtype

        def initial_state(params):
            state = networks.initial_state(params, 1)
            return {"hidden": state.hidden[0], "cell": state.cell[0]}

        def policy(params, key, observation, core_state, step):
            state = jax.tree.map(lambda x: x[None], core_state)
            batched = jax.tree.map(lambda x: x[None], observation)
            q_values, state = networks.step(params, batched, type(networks.initial_state(params, 1))(**state))
            epsilon = config.evaluation_epsilon if evaluation else exploration.linear_epsilon(config, step)
            action = distrax.EpsilonGreedy(q_values[0], epsilon).sample(seed=key).astype(action_dtype)
            new_state = {"hidden": state.hidden[0], "cell": state.cell[0]}
            return action, {"acted": jnp.asarray(True)}, new_state

        return RecurrentPolicy(policy, initial_state)


def check_networks(networks: R2D2Networks, environment_spec: specs.EnvironmentSpec, config: R2D2Config) -> None:
    """Raises a clear error when the networks do not fit the environment or the config's LSTM size."""
    num_actions = specs.num_discrete_actions(environment_spec)
    if networks.num_actions != num_actions:
        raise ValueError(
            f"The R2D2 network has {networks.num_actions} outputs but the environment has {num_actions} actions; "
            "build the networks from this environment's spec."
        )
    specs.check_same_shapes(networks.environment_spec, environment_spec, "The R2D2 networks")
    if networks.lstm_size != config.lstm_size:
        raise ValueError(
            f"The R2D2 network's LSTM has {networks.lstm_size} units but the config says lstm_size="
            f"{config.lstm_size}; build the networks with the config's lstm_size."
        )
