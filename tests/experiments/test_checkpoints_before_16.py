"""Runs checkpointed before issue #16's refactor (commit e3ceb92) resume after it, for every agent then shipped."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from acme.experiments import run_experiment
from tests.data.checkpoints_before_16 import write_checkpoints

HERE = pathlib.Path(write_checkpoints.__file__).parent


@pytest.mark.parametrize("agent", sorted(write_checkpoints.RUNS))
def test_a_run_checkpointed_before_the_refactor_resumes(tmp_path, agent, capsys):
    directory = tmp_path / agent
    shutil.copytree(HERE / agent, directory)  # a resumed run writes new checkpoints and prunes old ones
    (stored,) = [path for path in directory.iterdir() if path.name.startswith("ckpt-")]
    stored_learner_steps = int(stored.name.split("-")[1])
    with open(stored / "manifest.json") as f:
        stored_names = json.load(f)["metadata"]["learner_signature"]
    assert "namedtuple[TrainingState]" in stored_names or agent in ("sac", "mpo")  # the renamed types

    more = 100  # DQN fuses 64 updates a call: at one update per insert it steps once in 64 inserts
    config = write_checkpoints.make_config(agent, str(directory), write_checkpoints.ACTOR_STEPS + more)
    result = run_experiment(config, progress=False)
    assert f"Resuming from checkpoint {stored}" in capsys.readouterr().out
    assert result.actor_steps == write_checkpoints.ACTOR_STEPS + more
    assert result.learner_steps > stored_learner_steps  # the learner went on from its stored step
