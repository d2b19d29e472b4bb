"""Experiments: one description, run in-process or distributed."""

from acme.experiments.config import ExperimentConfig
from acme.experiments.distributed import make_distributed_experiment
from acme.experiments.run_experiment import EvaluationResult, ExperimentResult, run_experiment

__all__ = ["EvaluationResult", "ExperimentConfig", "ExperimentResult", "make_distributed_experiment", "run_experiment"]
