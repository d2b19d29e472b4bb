"""The description of one experiment, runnable in-process or distributed."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import dm_env

from acme import specs
from acme.agents import builders
from acme.agents.config_checks import is_integer
from acme.environments.batch import EnvironmentBatch, SeparateEnvironments
from acme.experiments.checkpointing import CheckpointingConfig
from acme.experiments.seeding import ExperimentSeeds
from acme.jax.sharding import LearnerSharding
from acme.utils import loggers

EnvironmentFactory = Callable[[int], dm_env.Environment]  # seed -> environment
NetworkFactory = Callable[[specs.EnvironmentSpec], Any]  # spec -> networks


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """Everything needed to run one agent on one environment.

    Attributes:
      builder: the agent's builder.
      environment_factory: seed -> dm_env environment.
      network_factory: environment spec -> the agent's networks.
      seed: seeds networks, actors and environments (how: ``acme.experiments.seeding``).
      max_num_actor_steps: the training budget in environment steps.
      eval_every: actor steps between evaluations (0 turns evaluation off).
      num_eval_episodes: episodes per evaluation, acting greedily.
      logger_factory: (label, steps_key) -> logger; terminal-only by default.
      environment_id: a readable name for logs and results.
      agent: the agent's name as the registry spells it (``"dqn"``), for results and recorded datasets; "": the
        builder's ``agent_name``.
      checkpointing: where and how often to checkpoint; a directory with checkpoints is resumed from.
      num_envs_per_actor: K, the environments each actor drives with one batched policy call per step
        (each with its own seed, episode and adder; exploration schedules count each one's steps).
      learner_sharding: the learner's devices and the layout of its state and batches over them
        (``acme.jax.sharding.LearnerSharding``: replicated, data, fsdp or rules); None: one device.
      actor_device: the id of the device the actors' policy runs on (Sebulba: the learner on others, its
        parameters moved from its layout to this device when the actors fetch them); None: the CPU.
      evaluation_environment_factory: seed -> the environment evaluators play, where it differs from training's
        (an Atari game played whole where training ends episodes on a lost life); None: ``environment_factory``.
      environment_batch_factory: seeds -> the K environments of an actor as one ``EnvironmentBatch`` stepped at
        once (Atari: ale-py's C++ vector environment), used when K > 1; None: K from ``environment_factory``.
      record_dataset: a new directory to write every transition the actors make to, as a Minari dataset
        (``acme.datasets.minari_format``), when the run ends. In a distributed program each actor node writes its
        episodes to ``DIR.shards/`` as it ends, and ``acme.experiments.distributed.merge_recording(config)``
        merges them into ``DIR`` once the program is over. None: nothing recorded.
    """

    builder: builders.AgentBuilder
    environment_factory: EnvironmentFactory
    network_factory: NetworkFactory
    seed: int = 0
    max_num_actor_steps: int = 100_000
    eval_every: int = 5_000
    num_eval_episodes: int = 10
    logger_factory: loggers.LoggerFactory | None = None
    environment_id: str = ""
    checkpointing: CheckpointingConfig | None = None
    num_envs_per_actor: int = 1
    learner_sharding: LearnerSharding | None = None
    actor_device: int | None = None
    evaluation_environment_factory: EnvironmentFactory | None = None
    environment_batch_factory: Callable[[Sequence[int]], EnvironmentBatch] | None = None
    record_dataset: str | None = None
    agent: str = ""

    def __post_init__(self):
        if not isinstance(self.builder, builders.AgentBuilder):
            raise TypeError(f"builder must be an acme.agents.builders.AgentBuilder, got {type(self.builder).__name__}.")
        if self.evaluation_environment_factory is not None and not callable(self.evaluation_environment_factory):
            raise TypeError("evaluation_environment_factory must be a callable (seed -> env) or None.")
        if not callable(self.environment_factory) or not callable(self.network_factory):
            raise TypeError(
                "environment_factory and network_factory must be callables (seed -> env, spec -> networks)."
            )
        if self.max_num_actor_steps < 1:
            raise ValueError(f"max_num_actor_steps must be >= 1, got {self.max_num_actor_steps}.")
        if self.eval_every < 0:
            raise ValueError(f"eval_every must be >= 0 (0 turns evaluation off), got {self.eval_every}.")
        if self.num_eval_episodes < 1:
            raise ValueError(f"num_eval_episodes must be >= 1, got {self.num_eval_episodes}.")
        if not is_integer(self.num_envs_per_actor) or self.num_envs_per_actor < 1:
            raise ValueError(f"num_envs_per_actor must be an integer >= 1, got {self.num_envs_per_actor!r}.")
        if self.actor_device is not None and not (is_integer(self.actor_device) and self.actor_device >= 0):
            raise ValueError(f"actor_device must be a device id >= 0 or None, got {self.actor_device!r}.")
        if self.learner_sharding is not None and not isinstance(self.learner_sharding, LearnerSharding):
            raise TypeError(
                f"learner_sharding must be an acme.jax.sharding.LearnerSharding or None, got {self.learner_sharding!r}."
            )
        if self.checkpointing is not None and not isinstance(self.checkpointing, CheckpointingConfig):
            raise TypeError(
                "checkpointing must be an acme.experiments.CheckpointingConfig or None, "
                f"got {type(self.checkpointing).__name__}."
            )

    def get_logger_factory(self) -> loggers.LoggerFactory:
        return self.logger_factory or loggers.make_logger_factory()

    def environments(self, seeds: Sequence[int]) -> EnvironmentBatch:
        """The environments an actor drives, one per seed, as the batch its loop steps."""
        if self.environment_batch_factory is not None and len(seeds) > 1:
            return self.environment_batch_factory(list(seeds))
        return SeparateEnvironments([self.environment_factory(seed) for seed in seeds])

    def evaluation_environment(self, seed: int) -> dm_env.Environment:
        """The environment an evaluator plays, for ``seed``."""
        return (self.evaluation_environment_factory or self.environment_factory)(seed)

    def environment_spec(self, evaluation: bool = False) -> specs.EnvironmentSpec:
        """The spec of the environment an actor drives (``evaluation``: the one the evaluator plays), read from one
        made for it, then closed."""
        if evaluation:
            environment = self.evaluation_environment(ExperimentSeeds(self.seed).evaluator_environment_seed())
        else:
            environment = self.environment_factory(self.seed)
        try:
            return specs.make_environment_spec(environment)
        finally:
            environment.close()
