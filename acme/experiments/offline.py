"""Learning from a recorded dataset: a learner and an evaluator on a schedule, no actors.

``run_offline_experiment(config, options)`` reads ``options.dataset`` (Minari's format,
``acme.datasets.minari_format``), checks it against the environment the agent is evaluated in, puts it in the
agent's own replay tables through the agent's own adder (``acme.datasets.offline``; streamed through a shuffle
buffer with ``options.stream_buffer``), and takes ``config.max_num_actor_steps`` learner steps (a run from a
dataset counts its budget and evaluation interval in learner steps), evaluating every ``config.eval_every`` of
them with the same ``Evaluator`` as online runs. Checkpoints hold the learner, the counts and the loop's progress
(not the dataset, which is read again on resume) and resume like online ones.
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax

from acme import specs
from acme.datasets.minari_format import Dataset, check_spec, read_dataset, read_metadata
from acme.datasets.offline import StreamedReplay, dataset_replay
from acme.experiments.checkpointing import learner_steps_of, open_resume
from acme.experiments.config import ExperimentConfig
from acme.experiments.evaluation import Evaluator
from acme.experiments.options import RunOptions
from acme.experiments.result import LEARNER_STEPS, Progress, RunResult, SeedRun
from acme.experiments.schedule import Schedule
from acme.experiments.seeding import ExperimentSeeds
from acme.utils import counting


def open_dataset(options: RunOptions) -> Dataset:
    """``options.dataset``: every episode read into memory, or only its metadata where it is streamed."""
    return read_metadata(options.dataset) if options.stream_buffer else read_dataset(options.dataset)


def make_offline_learner(
    experiment: ExperimentConfig,
    options: RunOptions,
    spec: specs.EnvironmentSpec,
    dataset: Dataset,
    counter: Any,
    resumes: int = 0,
) -> tuple[Any, Any]:
    """``(networks, learner)``: the agent's learner sampling ``dataset`` (``open_dataset(options)``) as its replay,
    in memory (``dataset_replay``) or streamed (``StreamedReplay``), counting into ``counter`` under ``learner``;
    ``resumes`` reseeds the sampling of a resumed run."""
    builder = experiment.builder
    networks = experiment.network_factory(spec)
    policy = builder.make_policy(networks, spec, evaluation=False)
    seed = experiment.seed + resumes
    if options.stream_buffer:
        stream = StreamedReplay(
            builder, spec, policy, dataset, options.stream_buffer, options.stream_samples_per_insert, seed=seed
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


def run_offline_experiment(config: ExperimentConfig, options: RunOptions, progress: bool = True) -> RunResult:
    """Trains ``config.builder``'s agent from ``options.dataset``; see the module docstring."""
    if options.dataset is None:
        raise ValueError("A run from a dataset needs RunOptions(dataset=DIR), a recorded dataset's directory.")
    dataset = open_dataset(options)
    spec = config.environment_spec(evaluation=True)
    check_spec(dataset, spec, options.dataset)
    with contextlib.ExitStack() as cleanup:
        resume = open_resume(config)
        cleanup.callback(resume.close)
        counter = counting.Counter()
        networks, learner = make_offline_learner(config, options, spec, dataset, counter, resume.resumes)
        cleanup.callback(getattr(learner, "close", lambda: None))
        evaluator = Evaluator(config, spec, networks, learner, LEARNER_STEPS) if config.eval_every else None
        if evaluator is not None:
            cleanup.callback(evaluator.close)
        if resume.restore(learner, counter):
            print(resume.restored.describe(), flush=True)
        progress_so_far = Progress.resumed(resume.loop, LEARNER_STEPS)
        checkpointer = resume.checkpointer
        schedule = Schedule(
            config.max_num_actor_steps,
            config.eval_every if evaluator is not None else 0,
            done=learner_steps_of(learner),
            next_eval=resume.loop.get("next_eval"),
            checkpointing=config.checkpointing,
            clock=checkpointer.clock if checkpointer is not None else None,
            progress=progress,
            unit="update",
            description=f"{config.environment_id or 'offline'} (offline)",
            step_name="learner step",
        )

        def advance() -> int:
            learner.step()
            return learner_steps_of(learner)

        def evaluate() -> float:
            counts = {**counter.get_counts(), LEARNER_STEPS: learner_steps_of(learner)}  # the learner's updates
            evaluation = evaluator.evaluate(0, lambda: counts, progress_so_far.elapsed)
            progress_so_far.evaluations.append(evaluation)
            return evaluation.mean_return

        def save() -> None:
            steps = learner_steps_of(learner)
            loop = progress_so_far.loop_state(schedule.next_eval, resume.resumes)
            path = checkpointer.save(learner.save(), steps, counter.save(), loop=loop)
            schedule.say(f"Checkpoint saved: {path} (learner steps {steps}).")

        schedule.run(advance, evaluate, lambda: learner_steps_of(learner), save)
    policy = jax.device_get(learner.get_variables(["policy"])[0])
    run = SeedRun(config.seed, progress_so_far.evaluations, 0, learner_steps_of(learner), policy_params=policy)
    return RunResult([run], progress_so_far.elapsed(), steps_key=LEARNER_STEPS)
