"""What the stock builders share: a config of the agent's own class, and actors that act with the learner's
``"policy"`` variables."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import jax

from acme import core, specs
from acme.agents import builders
from acme.jax.actors import RecurrentPolicy, RecurrentVectorActor, VectorActor
from acme.jax.learner import LearnerDefinition
from acme.jax.variable_client import VariableClient
from acme.replay.priorities import priority_writer


class ConfiguredBuilder(builders.AgentBuilder):
    """A builder with ``self.config``, its agent's learner, and a ``VectorActor`` acting with the ``"policy"``
    variables fetched every ``config.variable_update_period`` steps (a ``RecurrentVectorActor`` for a
    ``RecurrentPolicy``).

    Subclasses set ``config_class``: a builder made without a config uses its
    defaults, and a config of another class is refused. Without a
    ``config_class`` a config must be given. Subclasses set ``learner`` (the
    agent's ``LearnerDefinition``) and may override ``check_networks``.
    """

    config_class: type | None = None
    learner: LearnerDefinition | None = None

    def __init__(self, config: Any = None):
        if config is None:
            if self.config_class is None:
                raise TypeError(f"{type(self).__name__} has no config_class: give it a config.")
            config = self.config_class()
        elif self.config_class is not None and not isinstance(config, self.config_class):
            raise TypeError(
                f"{type(self).__name__} takes a {self.config_class.__name__}, got a {type(config).__name__}."
            )
        self.config = config

    @property
    def agent_name(self) -> str:
        return self.learner.name if self.learner is not None else type(self).__name__

    def check_networks(self, networks: Any, environment_spec: specs.EnvironmentSpec) -> None:
        """Raises a clear error when the networks do not fit the environment or config (default: no check)."""

    def make_learner(
        self,
        random_key: jax.Array,
        networks: Any,
        dataset: Iterator[Any],
        logger_factory: Any,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any = None,
        counter: Any = None,
        sharding: Any = None,
    ) -> core.Learner:
        """The agent's ``SGDLearner``; new priorities its update returns go to ``replay_client``'s table."""
        if self.learner is None:
            raise NotImplementedError(f"{type(self).__name__} sets no learner (a LearnerDefinition).")
        self.check_networks(networks, environment_spec)
        return self.learner.make_learner(
            networks,
            self.config,
            random_key,
            dataset,
            counter,
            logger_factory("learner", "learner_steps"),
            on_priorities=priority_writer(replay_client, self.config.replay_table_name),
            sharding=sharding,
        )

    def make_actor(
        self,
        random_keys: Sequence[jax.Array],
        policy: Any,
        environment_spec: specs.EnvironmentSpec,
        variable_source: core.VariableSource | None = None,
        adders: Sequence[Any] | None = None,
        device: Any = None,
    ) -> VectorActor:
        if adders is not None:
            self.check_vector_acting(len(random_keys))
        actor = RecurrentVectorActor if isinstance(policy, RecurrentPolicy) else VectorActor
        return actor(policy, random_keys, self._policy_client(variable_source), adders, device=device)

    def check_vector_acting(self, num_envs: int) -> None:
        """Any number of environments per actor (agents whose adders need more override this)."""

    def _policy_client(self, variable_source: core.VariableSource | None) -> VariableClient:
        """A client of ``variable_source``'s ``"policy"`` variables, fetched every ``variable_update_period`` steps."""
        if variable_source is None:
            raise ValueError(f"A {type(self).__name__} actor needs a variable_source (the learner or a handle to it).")
        return VariableClient(variable_source, "policy", update_period=self.config.variable_update_period)
