"""The speed benchmarks of issue #14 measure real work: smoke runs with tiny budgets."""

from __future__ import annotations

import json

import pytest

from benchmarks import components, peer_protocol


def test_peer_protocol_runs_pinned_children_and_summarises(tmp_path):
    output = tmp_path / "peer.json"
    peer_protocol.main(["--agents", "dqn", "--seeds", "0", "--max-steps", "600", "--output", str(output)])
    report = json.loads(output.read_text())
    (run,) = report["runs"]
    assert run["actor_steps"] == 600 and run["learner_steps"] == 0  # 600 steps: below DQN's min replay size
    assert run["training_steps_per_second"] > 0
    assert [step for step, _ in run["curve"]] == [600]  # the final evaluation (the first due would be at 5,000)
    assert report["summary"]["dqn"]["seeds_reaching_target"] == "0/1"
    assert report["machine"]["threads"]["XLA_FLAGS"].startswith("--xla_cpu_multi_thread_eigen=false")


def test_component_measures_are_positive():
    assert components.actor_steps_per_second(num_envs=2, steps=200) > 0


@pytest.mark.parametrize("feed", ["fixed", "local", pytest.param("reverb", marks=pytest.mark.reverb)])
def test_the_learner_learns_from_each_feed(feed):
    assert components.learner_updates_per_second(feed, num_updates=2, updates=4) > 0
