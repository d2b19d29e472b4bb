"""Experiments: one description, run in-process or distributed."""

from acme.experiments.checkpointing import CheckpointingConfig, ExperimentCheckpointer
from acme.experiments.config import ExperimentConfig
from acme.experiments.distributed import make_distributed_experiment
from acme.experiments.run_experiment import EvaluationResult, ExperimentResult, run_experiment

__all__ = [
    "CheckpointingConfig",
    "EvaluationResult",
    "ExperimentCheckpointer",
    "ExperimentConfig",     "ExperimentResult",
    "make_distributed_experiment",
    "run_experiment",
]
