"""Runs checkpointed before issue #16's refactor (commit e3ceb92) resume after it, for every agent then shipped."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from acme.experiments import run_experiment
from tests.data.checkpoints_before_16 import write_checkpoints

HERE = pathlib.Path(write_checkpoints.__file__).parent
# The learner state's type as e3ceb92 stored it (every agent's was its own ``TrainingState``) and as it is now: #16
# renamed DQN's, TD3's and D4PG's (a checkpoint of theirs resumes because signatures are compared without NamedTuple
# names); SAC's and MPO's kept theirs, so their stored signature is the very one a run writes now.
STATE_TYPE_NOW = {
    "dqn": "TargetNetworkState",
    "td3": "ActorCriticState",
    "d4pg": "ActorCriticState",
    "sac": "TrainingState",
    "mpo": "TrainingState",
}


def _signature(checkpoint: pathlib.Path) -> str:
    with open(checkpoint / "manifest.json") as f:
        return json.load(f)["metadata"]["learner_signature"]


def _state_type(signature: str) -> str:
    """The name of the outermost NamedTuple of a learner signature: 'PyTreeDef(CustomNode(namedtuple[NAME], ...'."""
    return signature.split("namedtuple[", 1)[1].split("]", 1)[0]


@pytest.mark.parametrize("agent", sorted(write_checkpoints.RUNS))
def test_a_run_checkpointed_before_the_refactor_resumes(tmp_path, agent, capsys):
    directory = tmp_path / agent
    shutil.copytree(HERE / agent, directory)  # a resumed run writes new checkpoints and prunes old ones
    (stored,) = [path for path in directory.iterdir() if path.name.startswith("ckpt-")]
    stored_learner_steps = int(stored.name.split("-")[1])
    stored_signature = _signature(stored)
    assert _state_type(stored_signature) == "TrainingState"

    more = 100  # DQN fuses 64 updates a call: at one update per insert it steps once in 64 inserts
    config = write_checkpoints.make_config(agent, str(directory), write_checkpoints.ACTOR_STEPS + more)
    result = run_experiment(config, progress=False)
    assert f"Resuming from checkpoint {stored}" in capsys.readouterr().out
    assert result.actor_steps == write_checkpoints.ACTOR_STEPS + more
    assert result.learner_steps > stored_learner_steps  # the learner went on from its stored step

    (written,) = [path for path in directory.iterdir() if path.name.startswith("ckpt-") and path != stored]
    signature_now = _signature(written)
    assert _state_type(signature_now) == STATE_TYPE_NOW[agent]
    if STATE_TYPE_NOW[agent] == "TrainingState":  # same type, same fields, same shapes: nothing to bridge
        assert signature_now == stored_signature
    else:  # a renamed type: what differs is its name, and only that
        assert signature_now != stored_signature
        assert signature_now.replace(STATE_TYPE_NOW[agent], "TrainingState") == stored_signature
