"""DQN as a distributed program: threads and Ray launchers, actor crash and restart."""

from __future__ import annotations

import csv
import threading

import psutil
import pytest

import launch
from acme.experiments import make_distributed_experiment
from acme.utils import loggers
from baselines.registry import make_experiment_config

SMALL_DQN = dict(hidden_sizes=(32, 32), min_replay_size=100, batch_size=32, samples_per_insert=8.0,
                 epsilon_decay_steps=1_000)


def small_config(run_dir, max_steps: int):
    return make_experiment_config(
        "dqn", "gymnasium:CartPole-v1", seed=0, max_steps=max_steps, eval_every=max_steps, num_eval_episodes=2,
        logger_factory=loggers.make_logger_factory(str(run_dir), time_delta=1.0, terminal=False),
        config_overrides=SMALL_DQN,
    )


def last_row(path) -> dict:
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert rows, f"{path} has no rows"
    return {k: float(v) for k, v in rows[-1].items() if v not in ("", None) and k != "episode_finished"}


def check_progress(run_dir, max_steps: int, num_actors: int) -> dict:
    for actor_id in range(num_actors):
        with open(run_dir / f"actor_{actor_id}.csv") as f:
            episodes = [r for r in csv.DictReader(f) if r.get("episode_length")]
        assert episodes and all(float(r["episode_length"]) > 0 for r in episodes)
    learner = last_row(run_dir / "learner.csv")
    assert learner["learner_steps"] > 0
    final = last_row(run_dir / "evaluator.csv")
    assert final["actor_steps"] >= max_steps
    assert final["learner_steps"] > 0
    return final


def test_program_has_the_expected_nodes():
    program = make_distributed_experiment(small_config("/tmp/unused", 100), num_actors=3)
    assert set(program.labels) >= {"replay", "counter", "learner", "evaluator", "actor_0", "actor_1", "actor_2"}
    assert set(program.terminal_labels) == {"actor_0", "actor_1", "actor_2", "evaluator"}
    with pytest.raises(ValueError, match="num_actors must be a positive integer"):
        make_distributed_experiment(small_config("/tmp/unused", 100), num_actors=0)


def test_threads_launcher_runs_dqn(tmp_path):
    launch.launch(make_distributed_experiment(small_config(tmp_path, 1_500), num_actors=2), launcher="threads",
                  timeout=300)
    final = check_progress(tmp_path, 1_500, 2)
    assert final["actor_node_starts"] == 2


@pytest.mark.ray
def test_ray_launcher_runs_dqn_and_restarts_a_killed_actor(tmp_path):
    """Two actors as Ray processes; one is SIGKILLed mid-run, restarted, and the run still finishes."""
    from tests.experiments.nodes import kill_actor_once

    max_steps = 2_500
    program = make_distributed_experiment(small_config(tmp_path, max_steps), num_actors=2, actor_restarts=2)
    record = tmp_path / "killed.txt"
    program.add_node(
        launch.FunctionNode(kill_actor_once, program.get("actor_0").handle, program.get("counter").handle,
                            800, str(record)),
        label="killer",
    )
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    launch.launch(program, launcher="ray", timeout=480)
    final = check_progress(tmp_path, max_steps, 2)
    killed_pid, steps_at_kill = map(int, record.read_text().split())
    assert not psutil.pid_exists(killed_pid) or psutil.Process(killed_pid).status() == psutil.STATUS_ZOMBIE
    assert steps_at_kill >= 800
    # The killed actor came back (its last row counts two actor starts plus its restart)
    # and counting went on past the kill.
    restarted = last_row(tmp_path / "actor_0.csv")
    assert restarted["actor_finished"] == 1 and restarted["actor_node_starts"] == 3
    assert final["actor_steps"] >= max_steps > steps_at_kill
    leftover = [p for p in psutil.Process().children(recursive=True) if p.pid not in children_before]
    assert not [p for p in leftover if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_a_learner_crash_ends_the_run_with_its_label_and_traceback(tmp_path):
    import dataclasses

    from agents.dqn import DQNConfig
    from tests.experiments.nodes import make_crashing_builder

    config = small_config(tmp_path, 50_000)
    config = dataclasses.replace(config, builder=make_crashing_builder(DQNConfig(**SMALL_DQN), crash_after=20))
    with pytest.raises(launch.NodeError) as error:
        launch.launch(make_distributed_experiment(config, num_actors=1), launcher="threads", timeout=300)
    assert error.value.label == "learner"
    assert "RuntimeError: learner exploded at step 21" in str(error.value)
    # The actor, blocked by the rate limiter once the learner died, was unblocked and returned.
    assert not [t for t in threading.enumerate() if t.name.startswith("launch:")]


@pytest.mark.parametrize("agent", ["sac", "td3", "d4pg", "mpo"])
def test_threads_launcher_runs_continuous_agents_on_pendulum(tmp_path, agent):
    """The same distributed program serves every continuous agent: nothing in it is agent-specific."""
    small = dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), min_replay_size=100, batch_size=16,
                 samples_per_insert=4.0)
    config = make_experiment_config(
        agent, "gymnasium:Pendulum-v1", seed=0, max_steps=600, eval_every=600, num_eval_episodes=1,
        logger_factory=loggers.make_logger_factory(str(tmp_path), time_delta=1.0, terminal=False),
        config_overrides=small,
    )
    launch.launch(make_distributed_experiment(config, num_actors=2), launcher="threads", timeout=300)
    check_progress(tmp_path, 600, 2)
