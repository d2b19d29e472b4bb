"""PPO as a distributed program on the threads launcher: rollouts through a shared queue, the policy-lag bound."""

from __future__ import annotations

import csv
import dataclasses

import pytest

import launch
from acme.experiments import make_distributed_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config


def _rows(path) -> list[dict]:
    with open(path) as f:
        return [{k: float(v) for k, v in r.items() if v not in ("", None)} for r in csv.DictReader(f)]


@pytest.mark.parametrize("replay", ["local", "learner"])  # shared tables, or the learner's fed over connections
def test_threads_ppo_trains_only_on_rollouts_within_the_policy_lag_bound(tmp_path, replay):
    # Two actors of two environments each feed one queue of two batches while the learner steps in its own
    # thread: rollouts wait in the queue, so some were acted on by parameters more than one learner step old.
    config = make_experiment_config(
        "ppo",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=6_000,
        eval_every=6_000,
        num_eval_episodes=2,
        logger_factory=loggers.make_logger_factory(str(tmp_path), time_delta=0.0, terminal=False),
        config_overrides=dict(batch_size=4, unroll_length=16, num_epochs=2, queue_size=8, max_policy_lag=1),
    )
    config = dataclasses.replace(config, num_envs_per_actor=2)
    launch.launch(make_distributed_experiment(config, num_actors=2, replay=replay), launcher="threads", timeout=300)

    rows = [r for r in _rows(tmp_path / "learner.csv") if "trained_policy_lag_max" in r]
    # How far the learner got is not asserted: it logs (and counts) once a second, so its last row can be a second
    # behind the end of the run (53 of the ~90 batches once in CI, on a fast host).
    assert rows and rows[-1]["learner_steps"] >= 1
    assert all(r["trained_policy_lag_max"] <= 1 for r in rows), [r["trained_policy_lag_max"] for r in rows]
    dropped = rows[-1]["dropped_rollouts"]
    over_bound = [r for r in rows if r["policy_lag_max"] > 1]
    # Every update that saw a rollout past the bound dropped it: the drop count rises at least once per such update.
    assert dropped >= len(over_bound)
    final = _rows(tmp_path / "evaluator.csv")[-1]
    assert final["actor_steps"] >= 6_000


@pytest.mark.parametrize(
    "replay, feed",
    [
        pytest.param("reverb", None, marks=pytest.mark.reverb, id="reverb-queue"),
        pytest.param("learner", "direct", id="direct-feed"),
        pytest.param("server", None, id="local-tables-node"),
    ],
)
def test_threads_impala_trains_on_rollouts_from_a_queue_across_a_transport(tmp_path, replay, feed):
    # The same program over what the Ray launcher uses: a reverb queue table, the learner's own queue fed over
    # direct connections (the default stack), or a replay node's local queue. Rollouts are sampled once, in order.
    config = make_experiment_config(
        "impala",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=4_000,
        eval_every=4_000,
        num_eval_episodes=2,
        logger_factory=loggers.make_logger_factory(str(tmp_path), time_delta=0.0, terminal=False),
        config_overrides=dict(batch_size=4, unroll_length=16, queue_size=16),
    )
    config = dataclasses.replace(config, num_envs_per_actor=2)
    program = make_distributed_experiment(config, num_actors=2, replay=replay, learner_feed=feed)
    assert ("replay" in program.labels) == (feed is None)
    if replay == "reverb":
        assert isinstance(program.get("replay").node, launch.ReverbNode)
    launch.launch(program, launcher="threads", timeout=300)
    rows = [r for r in _rows(tmp_path / "learner.csv") if "policy_lag_mean" in r]
    # The learner trained on the queue's rollouts. How far it got is not asserted: it logs (and counts) once a second,
    # and the whole run can end within a second of its first update (its log then has that one row).
    assert rows and rows[-1]["learner_steps"] >= 1 and all(r["dropped_rollouts"] == 0 for r in rows)
    assert _rows(tmp_path / "evaluator.csv")[-1]["actor_steps"] >= 4_000
