"""What a training run's recording says about itself: the agent that acted, and the actor steps it covers."""

from __future__ import annotations

import json
import os

from acme.datasets.recording import merge_shards, training_run_metadata, write_shard
from baselines import registry
from tests.datasets.test_minari_format import random_episodes

CARTPOLE = "gymnasium:CartPole-v1"


def test_a_training_runs_recording_names_the_agent_as_the_registry_does():
    """As `python -m baselines record` names it from the snapshot: `mdqn`, not its learner's "Munchausen DQN"."""
    for agent in ("mdqn", "qrdqn", "bc"):
        config = registry.make_experiment_config(agent, CARTPOLE, max_steps=10)
        assert training_run_metadata(config)["acme_agent"] == agent


def test_a_merged_recording_says_which_actor_steps_no_part_covers(tmp_path):
    """A first attempt stopped by SIGTERM at step 1000 left a shard; a second, resumed at 1000 and checkpointed at
    2000, was killed by SIGKILL and left none; the third resumed at 2000 and ran to 3000."""
    episodes, spec = random_episodes(CARTPOLE, 2)
    dataset, config = str(tmp_path / "episodes"), registry.make_experiment_config("dqn", CARTPOLE, max_steps=10)
    write_shard(dataset, "run", episodes[:1], spec, CARTPOLE, training_run_metadata(config, 0, 1000))
    merge_shards(dataset, spec, CARTPOLE, training_run_metadata(config, 2000, 3000), last=episodes[1:])
    metadata = json.load(open(os.path.join(dataset, "data", "metadata.json")))
    assert metadata["acme_actor_steps"] == [[0, 1000], [2000, 3000]]
    assert metadata["acme_missing_steps"] == [[1000, 2000]] and metadata["acme_shards"] == 2
    assert "actor steps 1000 to 2000 are not in this dataset" in metadata["acme_missing_note"]

    complete = str(tmp_path / "complete")  # resumed from the step its shard ends at: nothing is missing
    write_shard(complete, "run", episodes[:1], spec, CARTPOLE, training_run_metadata(config, 0, 1000))
    merge_shards(complete, spec, CARTPOLE, training_run_metadata(config, 1000, 3000), last=episodes[1:])
    metadata = json.load(open(os.path.join(complete, "data", "metadata.json")))
    assert metadata["acme_actor_steps"] == [[0, 3000]] and metadata["acme_missing_steps"] == []
    assert "acme_missing_note" not in metadata
