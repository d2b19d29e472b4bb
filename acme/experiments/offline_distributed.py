"""An offline experiment as a program of nodes: a counter, a learner that holds the dataset as its replay, and an
evaluator, on the threads or Ray launcher (``make_distributed_offline_experiment``).

The learner node reads the dataset itself (where it runs: on Ray, the dataset's directory must be reachable from
that machine), restores the newest checkpoint when it starts (again after a crash, with restarts), steps until
the budget is spent and saves a last checkpoint. The evaluator evaluates the learner's newest policy every
``eval_every`` learner steps and once the learner is done, then ends the program.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import launch
from acme import specs
from acme.datasets.minari_format import check_spec, read_metadata
from acme.experiments.checkpointing import hold_checkpoint_directory, learner_steps_of, open_resume
from acme.experiments.config import ExperimentConfig
from acme.experiments.distributed import EvaluatorNode, make_counter
from acme.experiments.evaluation import LEARNER_STEPS
from acme.experiments.offline import evaluation_spec, make_offline_learner, open_dataset
from acme.experiments.options import RunOptions
from acme.jax.polling_source import to_host


class OfflineLearnerNode:
    """The learner, its replay filled from the dataset through the agent's adder; steps until the budget."""

    def __init__(
        self, config: ExperimentConfig, options: RunOptions, environment_spec: specs.EnvironmentSpec, counter: Any
    ):
        dataset = open_dataset(options)
        check_spec(dataset, environment_spec, options.dataset)
        resume = open_resume(config, exclusive=False)  # the program's driver holds the directory
        _, self._learner = make_offline_learner(config, options, environment_spec, dataset, counter, resume.resumes)
        self._counter = counter
        self._max_steps = config.max_num_actor_steps
        self._checkpointer = resume.checkpointer
        self._done = threading.Event()
        self._stopping = threading.Event()  # set by stop(): no step after its checkpoint
        self._lock = threading.Lock()
        if resume.restore(self._learner):
            print(
                f"learner: restored {resume.restored.path} (learner step {resume.restored.learner_steps}).", flush=True
            )

    def pid(self) -> int:
        return os.getpid()

    def get_variables(self, names):
        return to_host(self._learner.get_variables(names))

    def steps(self) -> int:
        return learner_steps_of(self._learner)

    def done(self) -> bool:
        """Whether the budget is spent (and the last checkpoint, if any, written)."""
        return self._done.is_set()

    def run(self) -> None:
        while not launch.stop_requested() and learner_steps_of(self._learner) < self._max_steps:
            with self._lock:
                if self._stopping.is_set():
                    break
                self._learner.step()
            if self._checkpointer is not None and self._checkpointer.due(learner_steps_of(self._learner)):
                self.save()
        if learner_steps_of(self._learner) >= self._max_steps:
            if self._checkpointer is not None:
                self.save()
            self._done.set()

    def stop(self) -> None:
        """A checkpointed run stopped before its budget (Ctrl-C, SIGTERM) saves the learner as it stops."""
        if self._checkpointer is not None and not self._done.is_set():
            self._stopping.set()
            print(f"Checkpoint saved: {self.save()} (learner steps {self.steps()}).", flush=True)

    def save(self) -> str:
        if self._checkpointer is None:
            raise RuntimeError("This experiment has no checkpointing configured (ExperimentConfig.checkpointing).")
        with self._lock:
            steps = learner_steps_of(self._learner)
            return self._checkpointer.save(self._learner.save(), steps, self._counter.get_counts())


def make_distributed_offline_experiment(config: ExperimentConfig, options: RunOptions) -> launch.Program:
    """A program of a counter, ``OfflineLearnerNode`` (restarted up to ``options.learner_restarts`` times from its
    last checkpoint when the experiment is checkpointed; Ray only) and ``EvaluatorNode`` on learner steps
    (terminal); ``config``'s budget and evaluation interval count learner steps."""
    spec = evaluation_spec(config)
    check_spec(read_metadata(options.dataset), spec, options.dataset)  # refused before anything starts
    if config.checkpointing is not None:  # one run at a time writes there, this process's
        hold_checkpoint_directory(config.checkpointing)
        resume = open_resume(config, exclusive=False)  # the learner node restores it
        resume.close()
        if resume.restored is not None:
            print(resume.restored.describe(), flush=True)
        else:
            print(f"Checkpoints go to {config.checkpointing.directory}.", flush=True)
    program = launch.Program("offline")
    counter = program.add_node(launch.ServiceNode(make_counter, {}), label="counter")
    restarts = options.learner_restarts if config.checkpointing is not None else 0
    learner = program.add_node(
        launch.ServiceNode(OfflineLearnerNode, config, options, spec, counter),
        label="learner",
        restart=launch.RestartPolicy(max_restarts=restarts),
    )
    evaluator = launch.ServiceNode(EvaluatorNode, config, spec, learner, counter, LEARNER_STEPS)
    program.add_node(evaluator, label="evaluator", terminal=True)
    return program
