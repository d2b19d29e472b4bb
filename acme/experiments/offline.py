"""Learning from a recorded dataset: a learner and an evaluator on a schedule, no actors.

``run_offline_experiment(config)`` reads the dataset (Minari's format, ``acme.datasets.minari_format``), checks it
against the environment the agent is evaluated in, puts it in the agent's own replay tables through the agent's
own adder (``acme.datasets.offline``), and takes ``max_num_learner_steps`` learner steps, evaluating every
``eval_every`` of them with the same ``Evaluator`` as online runs. Checkpoints hold the learner, the counts and
the loop's progress (not the dataset, which is read again on resume) and resume like online ones.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax

from acme import specs
from acme.datasets.minari_format import Dataset, check_spec, read_dataset, read_metadata
from acme.datasets.offline import StreamedReplay, dataset_replay
from acme.experiments.checkpointing import Resume, learner_steps_of, open_resume
from acme.experiments.config import ExperimentConfig
from acme.experiments.evaluation import EvaluationResult, Evaluator
from acme.experiments.result import LEARNER_STEPS, RunResult, SeedRun
from acme.experiments.schedule import Schedule
from acme.experiments.seeding import ExperimentSeeds
from acme.utils import counting


@dataclasses.dataclass(frozen=True)
class OfflineExperimentConfig:
    """An experiment trained from a dataset.

    Attributes:
      experiment: the agent, its networks, the environment it is evaluated in, the seed, loggers and checkpoints
        (its actor-step budget and environments-per-actor are unused).
      dataset: the directory of a Minari dataset (``python -m baselines record --out DIR`` writes one).
      max_num_learner_steps: the training budget in learner steps (one learner step: one update, or U fused ones).
      eval_every: learner steps between evaluations (0 turns evaluation off); evaluations log learner steps in the
        ``actor_steps`` column, since an offline run takes no actor step.
      stream_buffer: 0 reads the whole dataset into memory; N > 0 streams it from disk through a shuffle buffer of
        N items (``acme.datasets.offline.StreamedReplay``), for datasets larger than memory.
      stream_samples_per_insert: with ``stream_buffer``, about how many times each item is sampled before it leaves
        the buffer (each place in a batch counts once).
    """

    experiment: ExperimentConfig
    dataset: str
    max_num_learner_steps: int = 10_000
    eval_every: int = 1_000
    stream_buffer: int = 0
    stream_samples_per_insert: float = 32.0

    def __post_init__(self):
        for name in ("max_num_learner_steps", "eval_every"):
            value = getattr(self, name)
            minimum = 1 if name == "max_num_learner_steps" else 0
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
        if not isinstance(self.dataset, str) or not self.dataset:
            raise ValueError(f"dataset must be the directory of a recorded dataset, got {self.dataset!r}.")
        if isinstance(self.stream_buffer, bool) or not isinstance(self.stream_buffer, int) or self.stream_buffer < 0:
            raise ValueError(
                f"stream_buffer must be an integer >= 0 (0: the dataset in memory), got {self.stream_buffer!r}."
            )
        spi = self.stream_samples_per_insert
        if isinstance(spi, bool) or not isinstance(spi, (int, float)) or not spi > 0:
            raise ValueError(f"stream_samples_per_insert must be a number > 0, got {spi!r}.")

    def open_dataset(self) -> Dataset:
        """The dataset: every episode read into memory, or only its metadata where it is streamed."""
        return read_metadata(self.dataset) if self.stream_buffer else read_dataset(self.dataset)


def evaluation_spec(experiment: ExperimentConfig) -> specs.EnvironmentSpec:
    """The spec of the environment the experiment's evaluator plays (what a dataset must match)."""
    environment = experiment.evaluation_environment(ExperimentSeeds(experiment.seed).evaluator_environment_seed())
    try:
        return specs.make_environment_spec(environment)
    finally:
        environment.close()


def make_offline_learner(
    config: OfflineExperimentConfig, spec: specs.EnvironmentSpec, dataset: Dataset, counter: Any, resumes: int = 0
) -> tuple[Any, Any]:
    """``(networks, learner)``: the agent's learner sampling ``dataset`` (``config.open_dataset()``) as its replay,
    in memory (``dataset_replay``) or streamed (``StreamedReplay``), counting into ``counter`` under ``learner``;
    ``resumes`` reseeds the sampling of a resumed run."""
    experiment = config.experiment
    builder = experiment.builder
    networks = experiment.network_factory(spec)
    policy = builder.make_policy(networks, spec, evaluation=False)
    seed = experiment.seed + resumes
    if config.stream_buffer:
        stream = StreamedReplay(
            builder, spec, policy, dataset, config.stream_buffer, config.stream_samples_per_insert, seed=seed
        )
        replay, iterator = stream.replay, stream.iterator(builder.make_dataset_iterator(stream.replay))
    else:
        replay = dataset_replay(builder, spec, policy, dataset, seed=seed)
        iterator = builder.make_dataset_iterator(replay)
    learner = builder.make_learner(
        ExperimentSeeds(experiment.seed).learner_key(),
        networks,
        iterator,
        experiment.get_logger_factory(),
        spec,
        replay,
        counting.Counter(counter, prefix="learner"),
        sharding=experiment.learner_sharding,
    )
    return networks, learner


def run_offline_experiment(
    config: OfflineExperimentConfig, progress: bool = True, dataset: Dataset | None = None
) -> RunResult:
    """Trains ``config.experiment.builder``'s agent from ``config.dataset``; see the module docstring.
    ``dataset`` is that dataset already opened (``config.open_dataset()`` otherwise)."""
    experiment = config.experiment
    dataset = dataset if dataset is not None else config.open_dataset()
    spec = evaluation_spec(experiment)
    check_spec(dataset, spec, config.dataset)
    resume = open_resume(experiment)
    try:
        return _train(config, progress, dataset, spec, resume)
    finally:
        resume.close()


def _train(
    config: OfflineExperimentConfig, progress: bool, dataset: Dataset, spec: specs.EnvironmentSpec, resume: Resume
) -> RunResult:
    """The training loop of ``run_offline_experiment``, on its checkpoint directory ``resume``."""
    experiment = config.experiment
    loop = resume.loop
    counter = counting.Counter()
    networks, learner = make_offline_learner(config, spec, dataset, counter, resume.resumes)
    evaluator = Evaluator(experiment, spec, networks, learner, LEARNER_STEPS) if config.eval_every else None
    if resume.restore(learner, counter):
        print(resume.restored.describe(), flush=True)
    start = time.perf_counter() - float(loop.get("wall_seconds", 0.0))
    evaluations = [_saved_evaluation(e) for e in loop.get("evaluations", [])]
    checkpointer = resume.checkpointer
    schedule = Schedule(
        config.max_num_learner_steps,
        config.eval_every if evaluator is not None else 0,
        done=learner_steps_of(learner),
        next_eval=int(loop.get("next_eval", config.eval_every)),
        checkpointing=experiment.checkpointing if checkpointer is not None else None,
        clock=checkpointer.clock if checkpointer is not None else None,
        progress=progress,
        unit="update",
        description=f"{experiment.environment_id or 'offline'} (offline)",
        step_name="learner step",
    )

    def save() -> None:
        path = checkpointer.save(
            learner.save(),
            learner_steps_of(learner),
            counter.save(),
            loop={
                "next_eval": schedule.next_eval,
                "resumes": resume.resumes,
                "wall_seconds": time.perf_counter() - start,
                "evaluations": [dataclasses.astuple(e) for e in evaluations],
            },
        )
        schedule.say(f"Checkpoint saved: {path} (learner steps {learner_steps_of(learner)}).")

    try:
        with schedule:
            while not schedule.finished:
                learner.step()
                steps = learner_steps_of(learner)
                schedule.reached(steps)
                if schedule.evaluation_due:
                    counts = {**counter.get_counts(), LEARNER_STEPS: steps}  # the learner's own count, its updates
                    evaluation = evaluator.evaluate(0, lambda: counts, lambda: time.perf_counter() - start)
                    evaluations.append(evaluation)
                    schedule.evaluated(evaluation.mean_return)
                if schedule.checkpoint_due(steps):
                    save()
                    schedule.checkpoint_saved(steps)
                schedule.stop_if_requested()
    finally:
        if evaluator is not None:
            evaluator.close()
        close_learner = getattr(learner, "close", None)
        if close_learner is not None:
            close_learner()
    run = SeedRun(
        experiment.seed,
        evaluations,
        0,
        learner_steps_of(learner),
        policy_params=jax.device_get(learner.get_variables(["policy"])[0]),
    )
    return RunResult([run], time.perf_counter() - start, steps_key=LEARNER_STEPS)


def _saved_evaluation(saved: Any) -> EvaluationResult:
    """An evaluation from a checkpoint's loop state. Checkpoints written before evaluations kept their learner
    steps hold four fields, the first of them the learner steps (an offline run takes no actor step)."""
    if len(saved) == 4:
        return EvaluationResult(0, *saved[1:], learner_steps=int(saved[0]))
    return EvaluationResult(*saved)
