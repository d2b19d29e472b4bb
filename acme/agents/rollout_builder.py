"""Replay, dataset, adder and actor for on-policy agents that learn from fixed-length rollouts through a queue.

An actor writes each environment's steps as one stream (episodes joined; see
``acme.jax.sequences``) cut into rollouts of ``unroll_length + 1`` steps that
start every ``unroll_length`` steps, so consecutive rollouts share one step
to bootstrap from. The rollouts go through a FIFO queue that the learner
consumes once, ``batch_size`` at a time. The policy returns ``(action,
extras)`` (an ``acme.jax.actors.ExtrasPolicy``; evaluation policies return
the action only); the extras (e.g. the behaviour log-probability and the
learner step of the acting parameters) are stored with every step.

The config needs ``unroll_length``, ``batch_size``, ``queue_size``,
``replay_table_name``, ``prefetch_size``, ``variable_update_period``,
``normalize_observations`` and ``max_policy_lag``.
"""

from __future__ import annotations

from typing import Any, Iterator

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

from acme import adders, specs
from acme.adders.reward_clipping import clip_rewards
from acme.agents.configured_builder import ConfiguredBuilder
from acme.datasets import ReplaySample
from acme.jax.actors import ExtrasPolicy, RecurrentPolicy
from acme.jax.policy_value import PolicyValueNetworks, RecurrentPolicyValueNetworks, check_policy_value_networks
from acme.jax.prefetch import PrefetchIterator
from acme.jax.running_statistics import ObservationNormalizer
from acme.replay.local_client import LocalBatches, LocalTablesClient
from acme.replay.tables import TableSpec


class RolloutBuilder(ConfiguredBuilder):
    """A rollout agent with ``PolicyValueNetworks`` (or ``RecurrentPolicyValueNetworks``, where the subclass's
    ``lstm_size`` says so): subclasses set ``config_class`` and ``learner`` (its learner serves ``"policy" =
    (policy params, observation statistics, learner step)``, as ``acme.jax.on_policy.on_policy_variables``
    does).

    The policy samples from the network's distribution (continuous actions
    clipped to [-1, 1] for the environment) and acts with its mode in
    evaluation; each training step stores the behaviour log-probability, the
    sampled action (``raw_action``) and the learner step of the parameters.
    """

    def lstm_size(self) -> int | None:
        """The LSTM size of the agent's recurrent networks, or None for feed-forward ones (the default)."""
        return None

    def check_networks(
        self,
        networks: PolicyValueNetworks | RecurrentPolicyValueNetworks,
        environment_spec: specs.EnvironmentSpec,
    ) -> None:
        """Raises a clear error when the networks do not fit the environment or the config's ``lstm_size``."""
        check_policy_value_networks(networks, environment_spec, self.agent_name)
        lstm_size = getattr(networks, "lstm_size", None)
        if lstm_size != self.lstm_size():
            raise ValueError(
                f"The {self.agent_name} networks have {'an LSTM of ' + str(lstm_size) if lstm_size else 'no LSTM'} "
                f"but the config says lstm_size={self.lstm_size()}; build the networks from the config."
            )

    def extras_spec(self, environment_spec: specs.EnvironmentSpec) -> dict:
        """What the policy stores with each step: ``log_prob``, ``policy_step`` and ``raw_action``, and with a
        recurrent network the actor adds ``core_state`` (the LSTM state the action was chosen from)."""
        actions = environment_spec.actions
        raw_dtype = np.int32 if isinstance(actions, specs.DiscreteArray) else np.float32
        extras = {
            "log_prob": specs.Array((), np.float32),
            "policy_step": specs.Array((), np.int32),
            "raw_action": specs.Array(actions.shape, raw_dtype),
        }
        if self.lstm_size() is not None:
            state = specs.Array((self.lstm_size(),), np.float32)
            extras["core_state"] = {"hidden": state, "cell": state}
        return extras

    def make_policy(
        self,
        networks: PolicyValueNetworks | RecurrentPolicyValueNetworks,
        environment_spec: specs.EnvironmentSpec,
        evaluation: bool = False,
    ):
        self.check_networks(networks, environment_spec)
        normalizer = ObservationNormalizer(self.config.normalize_observations)
        action_dtype = environment_spec.actions.dtype

        use_mode = evaluation and self.config.evaluation_actions == "mode"

        def act(policy_output, key, learner_step):
            """The action (a sample, or in evaluation the mode if ``evaluation_actions`` says so) and, for
            training, its extras."""
            distribution = networks.distribution(policy_output)
            raw = distribution.mode() if use_mode else distribution.sample(seed=key)
            action = (raw if networks.discrete else jnp.clip(raw, -1.0, 1.0))[0].astype(action_dtype)
            if evaluation:
                return action, {}
            return action, {
                "log_prob": distribution.log_prob(raw)[0].astype(jnp.float32),
                "policy_step": jnp.asarray(learner_step, jnp.int32),
                "raw_action": raw[0].astype(jnp.int32 if networks.discrete else jnp.float32),
            }

        def batched(statistics, observation):
            return normalizer.apply(statistics, jax.tree.map(lambda x: x[None], observation))

        if isinstance(networks, RecurrentPolicyValueNetworks):

            def initial_state(params):
                state = networks.initial_state(params[0], 1)
                return {"hidden": state.hidden[0], "cell": state.cell[0]}

            def recurrent_policy(params, key, observation, core_state, step):
                network_params, statistics, learner_step = params
                state = hk.LSTMState(core_state["hidden"][None], core_state["cell"][None])
                (policy_output, _), state = networks.step(network_params, batched(statistics, observation), state)
                action, extras = act(policy_output, key, learner_step)
                return action, extras, {"hidden": state.hidden[0], "cell": state.cell[0]}

            return RecurrentPolicy(recurrent_policy, initial_state)

        def policy(params, key, observation, step):
            policy_params, statistics, learner_step = params
            action, extras = act(
                networks.policy.apply(policy_params, batched(statistics, observation)), key, learner_step
            )
            return action if evaluation else (action, extras)

        return policy if evaluation else ExtrasPolicy(policy)

    @property
    def actors_fetch_directly(self) -> bool:
        """With a ``max_policy_lag``, actors fetch from the learner itself (every ``variable_update_period``
        steps), so their parameters lag only by the learner steps taken since."""
        return self.config.max_policy_lag is not None

    def make_replay_tables(self, environment_spec: specs.EnvironmentSpec, policy: Any = None) -> list[TableSpec]:
        """One FIFO queue of rollouts (each consumed once)."""
        c = self.config
        signature = adders.SequenceAdder.signature(
            environment_spec, c.unroll_length + 1, self.extras_spec(environment_spec)
        )
        return [TableSpec.queue(c.replay_table_name, c.queue_size, signature)]

    def make_dataset_iterator(self, replay_client: Any) -> Iterator[ReplaySample]:
        """Batches of ``batch_size`` rollouts, leaves ``[batch_size, unroll_length + 1, ...]``."""
        c = self.config
        if isinstance(replay_client, LocalTablesClient):
            return LocalBatches(replay_client.table(c.replay_table_name), c.batch_size)
        from acme.datasets.reverb import make_reverb_iterator, server_address_of

        address = server_address_of(replay_client)
        iterator = make_reverb_iterator(address, c.replay_table_name, c.batch_size)
        return PrefetchIterator(iterator, c.prefetch_size, name=f"reverb table {c.replay_table_name!r} at {address}")

    def make_adder(self, replay_client: Any, environment_spec: specs.EnvironmentSpec, policy: Any = None):
        adder = adders.SequenceAdder(
            client=replay_client,
            sequence_length=self.config.unroll_length + 1,
            period=self.config.unroll_length,
            priority_fns={self.config.replay_table_name: None},
            pad_end_of_episode=False,
            break_end_of_episode=False,
        )
        return clip_rewards(adder, self.config.max_abs_reward)

    def check_vector_acting(self, num_envs: int) -> None:
        c = self.config
        if c.queue_size < c.batch_size + num_envs - 1:
            # In one process the learner empties the queue only once a whole batch is there, and each of the K
            # environments may finish a rollout in the same step: a smaller queue would drop the oldest.
            raise ValueError(
                f"queue_size ({c.queue_size}) must be at least batch_size + num_envs_per_actor - 1 "
                f"({c.batch_size} + {num_envs} - 1) for an actor of {num_envs} environments."
            )
