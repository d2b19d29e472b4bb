"""Evaluation, the same in-process and distributed: greedy episodes with the learner's newest policy, one log row."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

import dm_env
import numpy as np
import tree

from acme import core, specs
from acme.experiments.config import ExperimentConfig
from acme.experiments.seeding import ExperimentSeeds

ACTOR_STEPS = "actor_steps"  # what an online run counts its budget and evaluations in
LEARNER_STEPS = "learner_steps"  # what a run from a dataset counts them in


@dataclasses.dataclass
class EvaluationResult:
    """One evaluation: after how many actor and learner steps, the mean and spread of its episodes' returns, and
    when. A run from a dataset takes no actor step (0); ``learner_steps`` is None where it was not known (records
    written before it was kept)."""

    actor_steps: int
    mean_return: float
    std_return: float
    wall_seconds: float
    learner_steps: int | None = None

    def log_row(self) -> dict:
        """The evaluator logger's columns of this evaluation."""
        steps = {"actor_steps": self.actor_steps}
        if self.learner_steps is not None:
            steps[LEARNER_STEPS] = self.learner_steps
        return {
            **steps,
            "evaluation_return": self.mean_return,
            "evaluation_return_std": self.std_return,
            "wall_seconds": self.wall_seconds,
        }


class Evaluator:
    """The evaluation actor (greedy policy, its own environments and keys) and the logger of its results.

    ``variable_source`` is the learner, or a handle to it; the actor fetches its
    newest policy before each evaluation and keeps it for all the episodes. The
    ``num_eval_episodes`` episodes run side by side, one per environment, with
    one batched policy call per step for all of them.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        networks: Any,
        variable_source: Any,
        steps_key: str = ACTOR_STEPS,
    ):
        seeds = ExperimentSeeds(config.seed)
        builder = config.builder
        policy = builder.make_policy(networks, environment_spec, evaluation=True)
        self._num_episodes = config.num_eval_episodes
        actor = builder.make_actor(
            seeds.evaluator_keys(self._num_episodes), policy, environment_spec, variable_source=variable_source
        )
        environments = [
            config.evaluation_environment(seed) for seed in seeds.evaluator_environment_seeds(self._num_episodes)
        ]
        self._episode_returns = lambda: side_by_side_episode_returns(environments, actor)
        self._actor = actor
        self._logger = config.get_logger_factory()("evaluator", steps_key)

    def evaluate(
        self, actor_steps: int, read_counts: Callable[[], Mapping[str, Any]], elapsed: Callable[[], float]
    ) -> EvaluationResult:
        """Runs ``num_eval_episodes`` with the newest policy and logs them under ``evaluator``, with the counts
        and the run's wall-clock seconds as they are once the episodes are over (``read_counts()``, ``elapsed()``);
        the counts' ``learner_steps`` is the result's. A run from a dataset gives ``actor_steps`` 0.
        """
        self._actor.update(wait=True)
        returns = self._episode_returns()
        wall_seconds = elapsed()
        counts = read_counts()
        learner_steps = counts.get(LEARNER_STEPS)
        result = EvaluationResult(
            actor_steps,
            float(np.mean(returns)),
            float(np.std(returns)),
            wall_seconds,
            None if learner_steps is None else int(learner_steps),
        )
        self._logger.write({**counts, **result.log_row()})
        return result

    def close(self) -> None:
        self._logger.close()


def side_by_side_episode_returns(environments: Sequence[dm_env.Environment], actor: core.Actor) -> list[float]:
    """One whole episode in each environment, all stepped together by ``actor`` (one batched policy call per
    step); returns each episode's summed reward. An environment whose episode is over waits, its last
    observation in the batch and its actions unused, until every episode is."""
    if actor.num_envs != len(environments):
        raise ValueError(f"The actor drives {actor.num_envs} environments but {len(environments)} were given.")
    timesteps = [environment.reset() for environment in environments]
    for i, timestep in enumerate(timesteps):
        actor.observe_first(i, timestep)
    returns = [0.0] * len(environments)
    running = list(range(len(environments)))
    while running:
        observations = tree.map_structure(lambda *xs: np.stack(xs), *[t.observation for t in timesteps])
        actions = actor.select_actions(observations)
        for i in running:
            action = tree.map_structure(lambda a: a[i], actions)
            timesteps[i] = environments[i].step(action)
            returns[i] += float(sum(np.sum(r) for r in tree.flatten(timesteps[i].reward)))
        running = [i for i in running if not timesteps[i].last()]
    return returns
