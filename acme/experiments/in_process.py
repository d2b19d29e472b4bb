"""Runs an experiment in one process: build it, act and learn under the replay's rate limiter, tear it down."""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import jax
import numpy as np

from acme.datasets.minari_format import EpisodeRecorder
from acme.datasets.recording import RecordingAdder, merge_shards, training_run_metadata, write_shard
from acme.environment_loop import EnvironmentLoop
from acme.experiments.checkpointing import (
    ExperimentCheckpointer,
    Resume,
    learner_steps_of,
    open_resume,
    reverb_checkpointer,
)
from acme.experiments.config import ExperimentConfig
from acme.experiments.evaluation import EvaluationResult, Evaluator
from acme.experiments.learning_actor import (
    InsertPressure,
    LearnerStepper,
    LearningActor,
    table_infos,
)
from acme.experiments.options import REPLAYS
from acme.experiments.result import Progress, RunResult, SeedRun
from acme.experiments.schedule import Schedule
from acme.experiments.seeding import ExperimentSeeds
from acme.jax.sharding import device_of
from acme.replay.local_client import LocalReplay
from acme.utils import counting, extras

REPLAY_BACKENDS = REPLAYS["local"]

__all__ = ["REPLAY_BACKENDS", "EvaluationResult", "RunResult", "run_experiment"]


def run_experiment(
    config: ExperimentConfig,
    progress: bool = True,
    stop_at_return: float | None = None,
    replay: str = "local",
) -> RunResult:
    """Trains ``config.builder``'s agent for ``config.max_num_actor_steps`` steps in this process.

    Evaluation episodes (greedy policy, separate environment) run every
    ``config.eval_every`` actor steps and are logged under the label ``evaluator``.
    With ``stop_at_return`` the run ends at the first evaluation whose mean
    return reaches it (for tests and time-to-solve benchmarks). ``replay`` picks
    the backend: ``"local"`` (tables in this process, the default) or
    ``"reverb"`` (an in-process reverb server).
    """
    if replay not in REPLAY_BACKENDS:
        raise ValueError(f"replay must be one of {REPLAY_BACKENDS}, got {replay!r}.")
    run = _InProcessRun(config, replay)
    try:
        try:
            run.train(progress, stop_at_return)
        except BaseException:  # stopped (Ctrl-C, SIGTERM) or failed: what was recorded is kept for the resumed run
            run.write_recording(partial=True)
            raise
        run.write_recording()
    finally:
        run.close()
    return run.result()


class _InProcessRun:
    """One in-process run: built (or resumed from a checkpoint) by the constructor, then ``train``, ``close``."""

    def __init__(self, config: ExperimentConfig, replay: str):
        self.config = config
        self._cleanup = contextlib.ExitStack()  # what ``close`` closes, in the reverse order of building
        try:
            self._build(config, replay)
        except BaseException:  # a run that could not be built closes what it built (its checkpoint directory too)
            self.close()
            raise

    def _build(self, config: ExperimentConfig, replay: str) -> None:
        resume = self._resume = open_resume(config, replay)
        self._cleanup.callback(resume.close)
        self.checkpointer = resume.checkpointer
        self.resumes = resume.resumes
        self.progress = Progress.resumed(resume.loop)
        self.actor_steps = int(resume.loop.get("actor_steps", 0))

        seeds = ExperimentSeeds(config.seed)
        num_envs = config.num_envs_per_actor
        environments = config.environments(seeds.environment_seeds(0, num_envs, self.resumes))
        spec = environments.environment_spec()
        networks = config.network_factory(spec)
        builder = config.builder
        policy = builder.make_policy(networks, spec, evaluation=False)
        tables = builder.make_replay_tables(spec, policy)
        pressure = None
        if replay == "local":
            self.replay_client = LocalReplay(tables, seed=config.seed, wait_on_insert=False)
        else:
            self.replay_client, stop_replay, pressure = _start_reverb(tables, resume)
            self._cleanup.callback(stop_replay)
        self.counter = counting.Counter()
        self.iterator = builder.make_dataset_iterator(self.replay_client)
        self._cleanup.callback(getattr(self.iterator, "close", lambda: None))
        logger_factory = config.get_logger_factory()
        self.learner = builder.make_learner(
            seeds.learner_key(),
            networks,
            self.iterator,
            logger_factory,
            spec,
            self.replay_client,
            counting.Counter(self.counter, prefix="learner"),
            sharding=config.learner_sharding,
        )
        self._cleanup.callback(getattr(self.learner, "close", lambda: None))
        self.actor_logger = logger_factory("actor", "actor_steps")
        self._cleanup.callback(self.actor_logger.close)
        keys = seeds.actor_keys(0, num_envs, self.resumes)  # a resumed run does not replay its first random streams
        adders = [builder.make_adder(self.replay_client, spec, policy) for _ in range(num_envs)]
        self.recording = None
        self._recorded_from = self.actor_steps  # a resumed run records from its checkpoint's step on
        if config.record_dataset is not None:  # one recorder per environment: their episodes interleave
            self.recording = [RecordingAdder(adder, EpisodeRecorder()) for adder in adders]
            adders = self.recording
        self._spec = spec
        self.actor = builder.make_actor(
            keys, policy, spec, variable_source=self.learner, adders=adders, device=device_of(config.actor_device)
        )
        self._cleanup.callback(environments.close)
        self.train_loop = EnvironmentLoop(
            environments,
            LearningActor(self.actor, LearnerStepper(self.learner, self.iterator, pressure)),
            counter=counting.Counter(self.counter, prefix="actor"),
            logger=self.actor_logger,
            label="actor",
        )
        self.evaluator = Evaluator(config, spec, networks, self.learner) if config.eval_every else None
        if self.evaluator is not None:
            self._cleanup.callback(self.evaluator.close)
        # Exploration schedules go on from the actor's saved steps.
        if resume.restore(self.learner, self.counter, self.replay_client, self.actor):
            print(resume.restored.describe(), flush=True)
        elif self.checkpointer is not None:
            print(f"Checkpoints go to {self.checkpointer.directory} ({_interval(self.checkpointer)}).", flush=True)

    def train(self, progress: bool, stop_at_return: float | None) -> None:
        """Acts (and learns) until the step budget is spent, evaluating and checkpointing on the way."""
        config, checkpointer = self.config, self.checkpointer
        schedule = Schedule(
            config.max_num_actor_steps,
            config.eval_every if self.evaluator is not None else 0,
            done=self.actor_steps,
            next_eval=self._resume.loop.get("next_eval"),
            checkpointing=config.checkpointing,
            clock=checkpointer.clock if checkpointer is not None else None,
            stop_at_return=stop_at_return,
            progress=progress,
            description=config.environment_id or "train",
        )

        def advance() -> tuple[int, float | None]:
            rows = self.train_loop.run(schedule.next_stretch(_CHUNK))  # the loop logs each finished episode
            self.actor_steps += self.train_loop.last_run_steps
            return self.actor_steps, float(np.sum(rows[-1]["episode_return"])) if rows else None

        def evaluate() -> float:
            evaluation = self.evaluator.evaluate(self.actor_steps, self._counts, self.progress.elapsed)
            self.progress.evaluations.append(evaluation)
            return evaluation.mean_return

        def save() -> None:  # the learner, counts, replay and actor, with the loop's progress
            path = checkpointer.save(
                self.learner.save(),
                learner_steps_of(self.learner),
                self.counter.save(),
                loop=self.progress.loop_state(schedule.next_eval, self.resumes, actor_steps=self.actor_steps),
                replay_client=self.replay_client,
                actor_state=self.actor.save(),
            )
            schedule.say(f"Checkpoint saved: {path} (actor steps {self.actor_steps}).")

        schedule.run(advance, evaluate, lambda: learner_steps_of(self.learner), save)

    def _counts(self) -> dict:
        """The shared counts, with the learner's own step count (its updates) as ``learner_steps``."""
        return {**self.counter.get_counts(), "learner_steps": learner_steps_of(self.learner)}

    def write_recording(self, partial: bool = False) -> str | None:
        """Writes the recorded episodes (finished ones, from every environment) to ``config.record_dataset``, with
        those an earlier, stopped attempt of the run kept; ``partial`` (a stopped run) keeps them as a shard in
        ``DIR.shards/`` for the resumed run to add instead. The metadata says which actor steps no part covers
        (``acme_missing_steps``: before a resumed run's checkpoint step, where no shard holds them)."""
        if self.recording is None:
            return None
        episodes = [episode for adder in self.recording for episode in adder.recorder.episodes]
        metadata = training_run_metadata(self.config, self._recorded_from, self.actor_steps)
        directory, environment_id = self.config.record_dataset, self.config.environment_id
        if partial:
            path = write_shard(directory, "run", episodes, self._spec, environment_id, metadata)
            if path is not None:
                print(f"Recorded {len(episodes)} episodes so far to {path}; the resumed run adds them.", flush=True)
            return path
        # An earlier, stopped attempt's shards come first.
        path = merge_shards(directory, self._spec, environment_id, metadata, last=episodes)
        print(f"Recorded {len(episodes)} episodes of the actors to {path}.", flush=True)
        return path

    def close(self) -> None:
        """Closes the evaluator, environments, loggers, learner and dataset, stops an in-process reverb server and
        lets go of the checkpoint directory."""
        self._cleanup.close()

    def result(self) -> RunResult:
        policy = jax.device_get(self.learner.get_variables(["policy"])[0])
        run = SeedRun(
            self.config.seed, self.progress.evaluations, self.actor_steps, learner_steps_of(self.learner), policy
        )
        return RunResult([run], self.progress.elapsed())


_CHUNK = 1_000  # steps (over the K environments) between checks for evaluations and checkpoints


def _interval(checkpointer: ExperimentCheckpointer) -> str:
    config = checkpointer.config
    every = []
    if config.every_minutes is not None:
        every.append(f"{config.every_minutes:g} min")
    if config.every_learner_steps is not None:
        every.append(f"{config.every_learner_steps} learner steps")
    return f"every {' or '.join(every)}, checked every {_CHUNK} actor steps; the newest {config.keep} kept"


def _start_reverb(tables: list, resume: Resume) -> tuple[Any, Callable[[], None], InsertPressure]:
    """An in-process reverb server of ``tables`` (loading ``resume``'s replay): ``(client, stop, pressure)``."""
    extras.require("reverb", "replay='reverb' (--replay reverb)")
    import reverb

    from acme.replay.reverb_tables import to_reverb_tables
    from launch import network
    from launch.reverb_server import start_reverb_server

    paths = resume.reverb_paths()
    replay_checkpointer = reverb_checkpointer(*paths) if paths is not None else None
    tables = to_reverb_tables(tables)
    server = start_reverb_server(tables, port=None, checkpointer=replay_checkpointer)
    network.confine_server(server)  # reverb listens on every interface; only this process uses it
    client = reverb.Client(f"localhost:{server.port}")
    loaded = resume.restored is not None and replay_checkpointer is not None
    pressure = InsertPressure(table_infos(tables, client, loaded))
    return client, server.stop, pressure
