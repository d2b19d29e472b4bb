"""The learner on several devices by configuration (``acme.jax.sharding``), on 8 fake CPU devices.

jax keeps the devices it started with, so the learners run in subprocesses (``tests/jax/sharded_learners.py``)
that ask for 8 CPU devices first; the fake devices share this machine's cores, so these runs check results,
not speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from acme.jax.sharding import LearnerSharding

# Its module fixtures each run a subprocess of minutes: under pytest-xdist one worker takes every test that uses
# them, so each runs once.
pytestmark = pytest.mark.xdist_group("sharding")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENTS = ("d4pg", "dqn", "impala", "mpo", "ppo", "r2d2", "sac", "td3")  # the DQN family: DQN's learner state


def _run(mode: str) -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", "tests.jax.sharded_learners", mode],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def updates() -> list[dict]:
    return _run("updates")


@pytest.fixture(scope="module")
def layouts() -> dict:
    return {row["check"]: row for row in _run("layouts")}


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_trains_under_data_and_fsdp_as_on_one_device(updates, agent):
    """Three updates on 8 devices (data, and fsdp) give the one-device learner's state, to float32 rounding of the
    reductions XLA splits over the devices (2 and 4 devices: tests/jax/test_multiprocess.py, the on-device loop's
    test below)."""
    rows = [row for row in updates if row["agent"] == agent]
    assert {(row["strategy"], row["devices"]) for row in rows} == {("data", 8), ("fsdp", 8)}
    for row in rows:
        assert row["leaves"] > 0 and row["integers_equal"] and row["relative_difference"] <= 1e-5, row


def test_rules_shard_exactly_the_leaves_they_name(layouts):
    specs = layouts["rules"]["specs"]
    assert layouts["rules"]["mesh"] == {"data": 4, "model": 2}
    named = {path: spec for path, spec in specs.items() if path.endswith("linear_0/w")}
    assert len(named) >= 2  # the parameter and its optimiser moments
    assert all(spec == [None, "model"] for spec in named.values()), named
    assert all(spec == [] for path, spec in specs.items() if path not in named), specs


def test_a_checkpoint_written_under_one_layout_restores_under_another(layouts):
    restore = layouts["restore"]
    assert restore["fsdp_sharded_leaves"] > 0  # the state was split, not only replicated
    assert restore["differences"] == {"data-8": 0.0, "one-device": 0.0}


def test_layouts_that_cannot_work_are_refused_with_the_reason(layouts):
    refusals = layouts["refusals"]
    assert "a batch of 12 does not split over 8 devices" in refusals["batch"]
    assert "rules ['no_such_layer'] match no leaf of the learner state" in refusals["unmatched_rule"]
    assert "devices=16 is more than the 8 this process has" in refusals["devices"]
    assert "over 'model' of size 2, which does not divide 3" in refusals["indivisible"]


def test_sebulba_acts_on_one_device_and_learns_on_others():
    (row,) = _run("sebulba")
    assert row["actor_devices"] == [0] and row["learner_devices"] == [1, 2], row
    assert row["actor_steps"] == 1_500 and row["learner_steps"] > 0
    assert row["fetch_seconds"] > 0  # moving the policy from the learner's layout to the actor's device


def test_a_distributed_program_acts_on_one_device_and_learns_on_others():
    """The actors on device 0, the learner data-parallel on devices 1 and 2, and it learns: the greedy policy's best
    evaluation (5 episodes, every 2,000 of 6,000 steps) reaches 100. Measured with this budget (seed 0, 16 runs; the
    threads' timing makes each run differ): best evaluations 198 to 500, final ones 81 to 500. The untrained policy
    (no learner step) returned 12 to 14 for seed 0, and 9 to 76 for seeds 0-7 (seed 3 up to 100 over 5
    evaluations)."""
    (row,) = _run("distributed")
    assert row["actor_steps"] >= 6_000 and row["learner_steps"] > 0, row
    assert max(row["evaluation_returns"]) >= 100, row


# A Ray run's learner node gets the devices of its layout: tests/baselines/test_exposure.py
# (test_ray_run_listens_on_loopback_only), whose Ray run is that run.


def test_the_on_device_loop_splits_its_environments_and_batches_and_learns_as_on_one_device():
    """Anakin over a mesh: each agent's environments split over the data axis (every carry leaf on all the mesh's
    devices), fsdp splits learner leaves, and the learner states after 12 iterations equal the one-device loop's to
    float32 rounding, for a transition agent (SAC with two updates per call) and a rollout agent."""
    rows = _run("anakin")
    checks = {row["check"] for row in rows}
    assert checks == {"anakin", "anakin_refusal"}
    runs = [row for row in rows if row["check"] == "anakin"]
    assert {(row["agent"], row["strategy"]) for row in runs} == {
        (agent, strategy) for agent in ("sac", "ppo") for strategy in ("data", "fsdp")
    }
    for row in runs:
        assert row["environment_specs"] == [[None, "data"]], row
        assert row["carry_devices"] == [row["devices"]], row
        assert min(row["learner_steps"]) > 0, row
        assert row["integers_equal"] and row["relative_difference"] <= 1e-5, row
        assert (row["learner_leaves_split"] > 0) == (row["strategy"] == "fsdp"), row
    (refusal,) = [row for row in rows if row["check"] == "anakin_refusal"]
    assert "splits each agent's 2 environments over the 4 devices of the data axis" in refusal["message"]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"strategy": "pipeline"}, "sharding strategy must be one of replicated, data, fsdp, rules"),
        ({"devices": 0}, "devices must be a count >= 1"),
        ({"devices": (1, 1)}, "devices must be distinct device ids"),
        ({"strategy": "data", "rules": (("w$", ("data",)),)}, "rules are for strategy 'rules'"),
        ({"strategy": "rules"}, "strategy 'rules' needs rules"),
        ({"strategy": "rules", "rules": (("w$", ("batch",)),)}, "each axis must be one of ('data', 'model')"),
        ({"strategy": "rules", "rules": (("(", ("data",)),)}, "is not a regular expression"),
        ({"strategy": "data", "model_axis": 2}, "model_axis is for strategy 'rules'"),
    ],
)
def test_a_sharding_description_is_checked_on_construction(fields, message):
    with pytest.raises(ValueError, match="") as error:
        LearnerSharding(**fields)
    assert message in str(error.value)
