"""Evaluation, the same in-process and distributed: greedy episodes with the learner's newest policy, one log row."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np

from acme import specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments.config import ExperimentConfig
from acme.experiments.seeding import ExperimentSeeds
from acme.utils import counting, loggers


@dataclasses.dataclass
class EvaluationResult:
    """One evaluation: after how many actor steps, the mean and spread of its episodes' returns, and when."""

    actor_steps: int
    mean_return: float
    std_return: float
    wall_seconds: float


class Evaluator:
    """The evaluation actor (greedy policy, its own environment and key) and the logger of its results.

    ``variable_source`` is the learner, or a handle to it; the actor fetches its
    newest policy before each evaluation and keeps it for all the episodes.
    """

    def __init__(
        self, config: ExperimentConfig, environment_spec: specs.EnvironmentSpec, networks: Any, variable_source: Any
    ):
        seeds = ExperimentSeeds(config.seed)
        builder = config.builder
        policy = builder.make_policy(networks, environment_spec, evaluation=True)
        self._actor = builder.make_actor(
            seeds.evaluator_key(), policy, environment_spec, variable_source=variable_source
        )
        self._loop = EnvironmentLoop(
            config.environment_factory(seeds.evaluator_environment_seed()),
            self._actor,
            counter=counting.Counter(prefix="evaluator"),
            logger=loggers.NoOpLogger(),
            label="evaluator",
            should_update=False,
        )
        self._num_episodes = config.num_eval_episodes
        self._logger = config.get_logger_factory()("evaluator", "actor_steps")

    def evaluate(
        self, actor_steps: int, read_counts: Callable[[], Mapping[str, Any]], elapsed: Callable[[], float]
    ) -> EvaluationResult:
        """Runs ``num_eval_episodes`` with the newest policy and logs them under ``evaluator``, with the counts
        and the run's wall-clock seconds as they are once the episodes are over (``read_counts()``, ``elapsed()``).
        """
        self._actor.update(wait=True)
        returns = self._loop.episode_returns(self._num_episodes)
        wall_seconds = elapsed()
        result = EvaluationResult(actor_steps, float(np.mean(returns)), float(np.std(returns)), wall_seconds)
        self._logger.write(
            {
                **read_counts(),
                "actor_steps": actor_steps,
                "evaluation_return": result.mean_return,
                "evaluation_return_std": result.std_return,
                "wall_seconds": wall_seconds,
            }
        )
        return result

    def close(self) -> None:
        self._logger.close()
