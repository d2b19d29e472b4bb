"""An in-process run on reverb replay without checkpoints leaves nothing in the temporary directory."""

from __future__ import annotations

import tempfile

import pytest

from acme.experiments import run_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config
from tests.experiments.resumable_run import SMALL_DQN


@pytest.mark.reverb
def test_a_reverb_run_without_checkpoint_dir_leaves_no_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where reverb's TempDirCheckpointer would go
    config = make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        max_steps=300,
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides=SMALL_DQN,
    )
    result = run_experiment(config, progress=False, replay="reverb")
    # Whether the learner got a step in depends on when reverb's prefetching pipeline has its first batch
    # ready (seconds on a busy machine); the run itself is what this test is about.
    assert result.actor_steps == 300
    assert list(tmp_path.iterdir()) == []
