"""The builder interface every agent implements, so experiments never special-case one."""

from __future__ import annotations

import abc
from typing import Any, Iterator, Sequence

import jax

from acme import core, specs
from acme.utils import counting, loggers


class AgentBuilder(abc.ABC):
    """Makes an agent's replay tables, dataset, adder, actor, learner and policy."""

    @abc.abstractmethod
    def make_replay_tables(self, environment_spec: specs.EnvironmentSpec, policy: Any) -> list:
        """The reverb tables the agent's data goes into."""

    @abc.abstractmethod
    def make_dataset_iterator(self, replay_client: Any) -> Iterator[Any]:
        """An iterator of training batches sampled from the tables."""

    @abc.abstractmethod
    def make_adder(self, replay_client: Any, environment_spec: specs.EnvironmentSpec, policy: Any) -> Any | None:
        """The adder an actor writes its experience with (None for evaluators)."""

    @abc.abstractmethod
    def make_actor(
        self,
        random_keys: Sequence[jax.Array],
        policy: Any,
        environment_spec: specs.EnvironmentSpec,
        variable_source: core.VariableSource | None = None,
        adders: Sequence[Any] | None = None,
        device: Any = None,
    ) -> core.Actor:
        """An actor of ``len(random_keys)`` environments (one key each; one adder each, or none for evaluation)
        acting with ``policy`` and parameters from ``variable_source``, its policy on ``device`` (a jax device;
        None: the CPU)."""

    @abc.abstractmethod
    def make_learner(
        self,
        random_key: jax.Array,
        networks: Any,
        dataset: Iterator[Any],
        logger_factory: loggers.LoggerFactory,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any | None = None,
        counter: counting.Counter | None = None,
        sharding: Any = None,
    ) -> core.Learner:
        """The learner updating ``networks`` from ``dataset``, on the devices and in the layout ``sharding`` (an
        ``acme.jax.sharding.LearnerSharding``) gives; None: jax's default device."""

    @abc.abstractmethod
    def make_policy(self, networks: Any, environment_spec: specs.EnvironmentSpec, evaluation: bool = False) -> Any:
        """The acting policy (exploratory unless ``evaluation``)."""

    def check_vector_acting(self, num_envs: int) -> None:
        """Raises when this agent's actors cannot drive ``num_envs`` environments each, one adder each
        (``num_envs_per_actor``). ``make_actor`` checks it when it is given adders; so does an actor whose policy an
        inference server evaluates, which never calls ``make_actor``."""
        if num_envs > 1:
            raise NotImplementedError(
                f"{type(self).__name__} does not support num_envs_per_actor > 1; use num_envs_per_actor=1."
            )

    @property
    def actors_fetch_directly(self) -> bool:
        """Whether distributed actors fetch parameters from the learner itself, each time their variable client
        asks, rather than from a copy polled every ``variable_poll_seconds`` (the default, cheaper; an agent that
        bounds its policy lag needs the newest parameters)."""
        return False

    def for_actor(self, actor_id: int, num_actors: int) -> "AgentBuilder":
        """The builder actor ``actor_id`` of ``num_actors`` uses in a distributed run.

        Agents override it to give actors different exploration (e.g. per-actor
        epsilons); by default every actor uses this builder.
        """
        del actor_id, num_actors
        return self
