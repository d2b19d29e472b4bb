"""Experiments: one description (``ExperimentConfig``), run by one call (``run``) in-process, distributed, on the
device or from a dataset.

The runners are imported on first use, so importing ``ExperimentConfig`` loads
neither of them (nor the launcher, reverb or TensorFlow).
"""

from __future__ import annotations

import importlib

from acme.experiments.checkpointing import CheckpointingConfig, ExperimentCheckpointer
from acme.experiments.config import ExperimentConfig

_LAZY = {
    "EvaluationResult": "acme.experiments.evaluation",
    "RunResult": "acme.experiments.result",
    "SeedRun": "acme.experiments.result",
    "run_experiment": "acme.experiments.in_process",
    "run_offline_experiment": "acme.experiments.offline",
    "make_distributed_experiment": "acme.experiments.distributed",
    "merge_recording": "acme.experiments.distributed",
    "RunOptions": "acme.experiments.options",
    "run": "acme.experiments.running",
}

__all__ = ["CheckpointingConfig", "ExperimentCheckpointer", "ExperimentConfig", *sorted(_LAZY)]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'acme.experiments' has no attribute {name!r}")
