"""Runs an experiment in one process: actor and learner interleaved under the replay's rate limiter."""

from __future__ import annotations

import dataclasses
import time
from typing import Optional

import jax
import numpy as np
import reverb

from acme import core, specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments.config import ExperimentConfig
from acme.utils import counting


class LearningActor(core.Actor):
    """An actor whose ``update`` also steps the learner as often as replay allows.

    The replay table's samples-per-insert rate limiter decides: every batch the
    dataset has ready is one learner step, so learning keeps exactly the
    configured ratio to acting.
    """

    def __init__(self, actor: core.Actor, learner: core.Learner, iterator: core.PrefetchingIterator,
                 max_learner_steps_per_update: int = 64):
        self._actor = actor
        self._learner = learner
        self._iterator = iterator
        self._max_steps = max_learner_steps_per_update

    def select_action(self, observation):
        return self._actor.select_action(observation)

    def observe_first(self, timestep) -> None:
        self._actor.observe_first(timestep)

    def observe(self, action, next_timestep) -> None:
        self._actor.observe(action, next_timestep)

    def update(self, wait: bool = False) -> None:
        steps = 0
        while self._iterator.ready() and steps < self._max_steps:
            self._learner.step()
            steps += 1
        if steps:
            self._actor.update(wait)


@dataclasses.dataclass
class EvaluationResult:
    actor_steps: int
    mean_return: float
    std_return: float
    wall_seconds: float


@dataclasses.dataclass
class ExperimentResult:
    """What a run reached: every evaluation, and the best one."""

    evaluations: list[EvaluationResult]
    actor_steps: int
    learner_steps: int
    wall_seconds: float

    @property
    def best(self) -> Optional[EvaluationResult]:
        return max(self.evaluations, key=lambda e: e.mean_return) if self.evaluations else None

    def first_reaching(self, threshold: float) -> Optional[EvaluationResult]:
        return next((e for e in self.evaluations if e.mean_return >= threshold), None)


def _evaluate(loop: EnvironmentLoop, num_episodes: int) -> tuple[float, float]:
    returns = loop.episode_returns(num_episodes)
    return float(np.mean(returns)), float(np.std(returns))


def run_experiment(
    config: ExperimentConfig, progress: bool = True, stop_at_return: Optional[float] = None
) -> ExperimentResult:
    """Trains ``config.builder``'s agent for ``config.max_num_actor_steps`` steps in this process.

    Evaluation episodes (greedy policy, separate environment) run every
    ``config.eval_every`` actor steps and are logged under the label ``evaluator``.
    With ``stop_at_return`` the run ends at the first evaluation whose mean
    return reaches it (for tests and time-to-solve benchmarks).
    """
    start = time.perf_counter()
    key = jax.random.PRNGKey(config.seed)
    learner_key, actor_key, eval_key = jax.random.split(key, 3)
    logger_factory = config.get_logger_factory()

    environment = config.environment_factory(config.seed)
    environment_spec = specs.make_environment_spec(environment)
    networks = config.network_factory(environment_spec)
    builder = config.builder

    policy = builder.make_policy(networks, environment_spec, evaluation=False)
    server = reverb.Server(builder.make_replay_tables(environment_spec, policy), port=None)
    replay_client = reverb.Client(f"localhost:{server.port}")
    counter = counting.Counter()
    iterator = builder.make_dataset_iterator(replay_client)
    learner = builder.make_learner(
        learner_key, networks, iterator, logger_factory, environment_spec, replay_client,
        counting.Counter(counter, prefix="learner"),
    )
    adder = builder.make_adder(replay_client, environment_spec, policy)
    actor = builder.make_actor(actor_key, policy, environment_spec, variable_source=learner, adder=adder)
    actor_logger = logger_factory("actor", "actor_steps")
    train_loop = EnvironmentLoop(
        environment,
        LearningActor(actor, learner, iterator),
        counter=counting.Counter(counter, prefix="actor"),
        logger=actor_logger,
        label="actor",
    )

    eval_loop = None
    evaluations: list[EvaluationResult] = []
    if config.eval_every:
        eval_policy = builder.make_policy(networks, environment_spec, evaluation=True)
        eval_actor = builder.make_actor(eval_key, eval_policy, environment_spec, variable_source=learner)
        eval_loop = EnvironmentLoop(
            config.environment_factory(config.seed + 1_000_003),
            eval_actor,
            counter=counting.Counter(prefix="evaluator"),
            logger=None,
            label="evaluator",
        )
        eval_logger = logger_factory("evaluator", "actor_steps")

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=config.max_num_actor_steps, unit="step", dynamic_ncols=True, mininterval=1.0,
                   desc=config.environment_id or "train")
    actor_steps = 0
    next_eval = config.eval_every
    try:
        while actor_steps < config.max_num_actor_steps:
            result = train_loop.run_episode(max_steps=config.max_num_actor_steps - actor_steps)
            actor_logger.write(result)
            actor_steps += result["episode_length"]
            if bar is not None:
                bar.update(result["episode_length"])
                bar.set_postfix(ret=f"{float(np.sum(result['episode_return'])):.1f}", refresh=False)
            if eval_loop is not None and (actor_steps >= next_eval or actor_steps >= config.max_num_actor_steps):
                eval_actor.update(wait=True)
                mean_return, std_return = _evaluate(eval_loop, config.num_eval_episodes)
                evaluation = EvaluationResult(actor_steps, mean_return, std_return, time.perf_counter() - start)
                evaluations.append(evaluation)
                eval_logger.write({
                    "actor_steps": actor_steps,
                    "evaluation_return": mean_return,
                    "evaluation_return_std": std_return,
                    "learner_steps": counter.get_counts().get("learner_steps", 0),
                    "wall_seconds": evaluation.wall_seconds,
                })
                if bar is not None:
                    bar.set_description(f"{config.environment_id or 'train'} eval={mean_return:.1f}")
                while next_eval <= actor_steps:
                    next_eval += config.eval_every
                if stop_at_return is not None and mean_return >= stop_at_return:
                    break
    finally:
        if bar is not None:
            bar.close()
        actor_logger.close()
        if eval_loop is not None:
            eval_logger.close()
        if hasattr(iterator, "close"):
            iterator.close()
        server.stop()
    learner_steps = getattr(learner, "num_steps", counter.get_counts().get("learner_steps", 0))
    return ExperimentResult(evaluations, actor_steps, learner_steps, time.perf_counter() - start)
