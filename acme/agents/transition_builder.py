"""Replay, dataset, adder and actor for agents that learn from n-step transitions.

DQN, SAC, TD3, D4PG and MPO all store n-step transitions in one replay table
under a samples-per-insert rate limiter and act with a ``VectorActor``; they
differ only in their learner and policy. Their builders subclass
``NStepTransitionBuilder`` and read the shared fields from ``self.config``
(see ``acme.agents.config_checks.check_transition_replay``), plus optional
``prioritized_replay`` and ``priority_exponent``.
"""

from __future__ import annotations

import abc
from typing import Any, Iterator

import jax

from acme import adders, specs
from acme.adders.reward_clipping import clip_rewards
from acme.agents.configured_builder import ConfiguredBuilder
from acme.datasets import ReplaySample
from acme.jax.prefetch import PrefetchIterator
from acme.jax.running_statistics import ObservationNormalizer
from acme.replay import tables as replay_tables
from acme.replay.local_client import LocalBatches, LocalTablesClient, stack_batches
from acme.replay.tables import TableSpec


class NStepTransitionBuilder(ConfiguredBuilder):
    """The data side of an n-step-transition agent; subclasses set ``config_class`` and add the learner and
    policy (actors: ``ConfiguredBuilder``'s)."""

    def make_replay_tables(self, environment_spec: specs.EnvironmentSpec, policy: Any = None) -> list[TableSpec]:
        """One table of ``replay_signature`` items under a samples-per-insert limit (backend-free; see
        ``acme.replay``)."""
        c = self.config
        if getattr(c, "prioritized_replay", False):
            sampler = replay_tables.Prioritized(c.priority_exponent)
        else:
            sampler = replay_tables.Uniform()
        # How far inserts may run ahead of samples (and back) before the limiter blocks: at least
        # 32 inserts, since the writer sends items in small asynchronous bursts (see InsertPressure),
        # and two learner calls' worth of samples ([U, B] at once).
        error_buffer = max(
            c.min_replay_size * c.samples_per_insert * c.samples_per_insert_tolerance,
            2.0 * c.batch_size * c.num_sgd_steps_per_step,
            32.0 * c.samples_per_insert,
        )
        limiter = replay_tables.SampleToInsertRatio(
            samples_per_insert=c.samples_per_insert,
            min_size_to_sample=c.min_replay_size,
            error_buffer=error_buffer,
        )
        return [
            TableSpec(
                name=c.replay_table_name,
                sampler=sampler,
                remover=replay_tables.Fifo(),
                max_size=c.max_replay_size,
                rate_limiter=limiter,
                signature=self.replay_signature(environment_spec),
            )
        ]

    def replay_signature(self, environment_spec: specs.EnvironmentSpec) -> Any:
        """The signature of one replay item: an n-step transition (agents that store other items override it,
        with ``make_adder``)."""
        return adders.NStepTransitionAdder.signature(environment_spec)

    def zero_padded_sequences(self) -> tuple[int, int] | None:
        """``(sequence_length, period)`` for an agent whose items are zero-padded sequences of ``acme.adders.Step``
        (its ``make_adder`` a ``SequenceAdder`` with ``pad_end_of_episode=True``: R2D2), which the on-device loop
        then stores (``acme.anakin.sequences``); None for n-step transitions."""
        return None

    def make_dataset_iterator(self, replay_client: Any) -> Iterator[ReplaySample]:
        """Batches of ``batch_size``, or ``[U, batch_size]`` stacks for ``num_sgd_steps_per_step`` U > 1.

        From local tables (``LocalReplay``, or a replay node's) they are gathered when asked for; from reverb a
        background thread keeps ``prefetch_size`` ready.
        """
        c = self.config
        if isinstance(replay_client, LocalTablesClient):
            return LocalBatches(replay_client.table(c.replay_table_name), c.batch_size, c.num_sgd_steps_per_step)
        from acme.datasets.reverb import make_reverb_iterator, server_address_of

        address = server_address_of(replay_client)
        iterator = make_reverb_iterator(address, c.replay_table_name, c.batch_size * c.num_sgd_steps_per_step)
        if c.num_sgd_steps_per_step > 1:
            iterator = (stack_batches(sample, c.num_sgd_steps_per_step) for sample in iterator)
        return PrefetchIterator(iterator, c.prefetch_size, name=f"reverb table {c.replay_table_name!r} at {address}")

    def make_adder(self, replay_client: Any, environment_spec: specs.EnvironmentSpec, policy: Any = None):
        adder = adders.NStepTransitionAdder(
            client=replay_client,
            n_step=self.config.n_step,
            discount=self.config.discount,
            priority_fns={self.config.replay_table_name: None},
        )
        return clip_rewards(adder, self.config.max_abs_reward)


class ActorCriticBuilder(NStepTransitionBuilder):
    """An n-step-transition agent whose learner serves ``"policy" = (policy_params, observation_stats)``.

    Subclasses set ``config_class`` and ``learner`` (the agent's
    ``LearnerDefinition``: its update, state and variables) and implement
    ``select_actions``; the config needs ``normalize_observations``. The
    networks need an ``environment_spec`` attribute.
    """

    def check_networks(self, networks: Any, environment_spec: specs.EnvironmentSpec) -> None:
        """Raises a clear error when the networks do not fit the environment or config."""
        specs.check_same_shapes(networks.environment_spec, environment_spec, f"The {self.agent_name} networks")

    @abc.abstractmethod
    def select_actions(
        self, networks: Any, policy_params: Any, key: jax.Array, observations: Any, evaluation: bool
    ) -> jax.Array:
        """Actions in [-1, 1] for a batch of (normalised) observations; deterministic if ``evaluation``."""

    def make_policy(self, networks: Any, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)
        normalizer = ObservationNormalizer(self.config.normalize_observations)

        def policy(params, key, observation, step):
            policy_params, statistics = params
            observations = normalizer.apply(statistics, jax.tree.map(lambda x: x[None], observation))
            return self.select_actions(networks, policy_params, key, observations, evaluation)[0]

        return policy
