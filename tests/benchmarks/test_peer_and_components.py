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
    # The rate is the run's own steps over its own wall time (as rounded in the report).
    assert run["training_steps_per_second"] == pytest.approx(run["actor_steps"] / run["wall_seconds"], rel=1e-2)
    assert [step for step, _ in run["curve"]] == [600]  # the final evaluation (the first due would be at 5,000)
    assert report["summary"]["dqn"]["seeds_reaching_target"] == "0/1"
    assert report["machine"]["threads"]["XLA_FLAGS"].startswith("--xla_cpu_multi_thread_eigen=false")


def _record(agent, seed, steps_per_second, first_seconds, final):
    return {
        "agent": agent,
        "seed": seed,
        "library": "SBX 0.28.0",
        "training_steps_per_second": steps_per_second,
        "first_at_target": None if first_seconds is None else {"step": 1, "wall_seconds": first_seconds},
        "final_return": final,
    }


def test_the_summary_gives_our_speed_as_a_ratio_to_sbx_from_the_same_run():
    ours = [
        _record("dqn", 0, 1500.0, 20.0, 500.0),
        _record("dqn", 1, 1600.0, None, 300.0),
        _record("dqn", 2, 1700.0, 30.0, 500.0),
    ]
    sbx = [
        _record("dqn", 0, 2000.0, 25.0, 200.0),
        _record("dqn", 1, 2100.0, 15.0, 500.0),
        _record("dqn", 2, 1900.0, None, 100.0),
    ]
    summary = peer_protocol.summarise(ours, sbx)["dqn"]
    assert summary["median_training_steps_per_second"] == 1600.0
    assert summary["median_seconds_to_target"] == 25.0 and summary["seeds_reaching_target"] == "2/3"
    assert summary["seeds_final_at_target"] == 2
    assert summary["sbx_this_run"]["median_training_steps_per_second"] == 2000.0
    assert summary["sbx_this_run"]["seeds_final_at_target"] == 1
    assert summary["steps_per_second_ratio_to_sbx"] == 0.8
    assert "sbx_this_run" not in peer_protocol.summarise(ours)["dqn"]


def test_a_peer_python_that_is_not_an_interpreter_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        peer_protocol.main(
            ["--agents", "dqn", "--peer-python", str(tmp_path / "missing"), "--output", str(tmp_path / "peer.json")]
        )
    assert "make install-peers" in capsys.readouterr().err


def test_the_acting_measure_times_the_steps_it_was_asked_for_and_writes_an_item_per_step():
    num_envs, steps, n_step = 2, 200, 3  # DQN's default n_step
    acting = components.timed_acting(num_envs=num_envs, steps=steps)
    assert acting["steps"] == steps and acting["seconds"] > 0
    # Each step adds an n-step item once its episode has n - 1 steps behind it (the rest at the episode's end):
    # per environment, at most n - 1 items are carried into or out of the timed window.
    assert abs(acting["items"] - steps) <= num_envs * (n_step - 1), acting


@pytest.mark.parametrize("feed", ["fixed", "local", pytest.param("reverb", marks=pytest.mark.reverb)])
def test_the_learner_measure_times_the_updates_its_state_counts_on_each_feed(feed):
    learning = components.timed_updates(feed, num_updates=2, updates=4)
    assert learning["calls"] == 2 and learning["updates"] == 4  # 2 fused updates a call, counted by the state
    assert learning["seconds"] > 0


def test_the_learner_measure_uses_the_config_it_is_given():
    """The distributed benchmark times the updates of its runs' own config (baseline and --overrides)."""
    learning = components.timed_updates("fixed", num_updates=1, updates=2, hidden_sizes=(8,), n_step=3)
    assert learning["updates"] == 2
    with pytest.raises(ValueError, match="batch_size"):  # the override reached the config, which refuses it
        components.learner_updates_per_second("fixed", num_updates=1, updates=2, batch_size=0)
    with pytest.raises(ValueError, match="num_sgd_steps_per_step is num_updates here"):
        components.learner_updates_per_second("fixed", num_updates=1, updates=2, num_sgd_steps_per_step=4)


def test_the_distributed_benchmark_separates_start_up_from_the_steady_state_rate():
    from benchmarks.distributed_dqn_throughput import steady_state

    # 10 s of start-up, then 500 steps/s: 10,000 steps take 30 s and 20,000 take 50 s.
    short = {"actor_steps": 10_000, "learner_steps": 4_000, "wall_seconds": 30.0, "cpu_seconds": {"driver": 12.0}}
    long = {"actor_steps": 20_000, "learner_steps": 9_000, "wall_seconds": 50.0, "cpu_seconds": {"driver": 22.0}}
    assert steady_state(short, long) == {
        "steady_actor_steps_per_second": 500.0,
        "startup_seconds": 10.0,
        "learner_steps_per_actor_step": 0.45,
        "steady_cpu_microseconds_per_actor_step": {"driver": 1000.0},
        "steady_cores_busy": 0.5,
    }


def test_the_distributed_benchmark_turns_the_extra_cpu_into_unit_costs():
    from benchmarks.distributed_dqn_throughput import model_report, steady_state

    # The longer run's extra 10,000 steps in 20 s took 4 s of actor CPU, 6 s of learner CPU, 1 s of the other
    # nodes and 2 s of Ray's daemons, and sent 100 MB over loopback.
    short = {
        "num_actors": 1,
        "actor_steps": 10_000,
        "learner_steps": 4_000,
        "wall_seconds": 30.0,
        "loopback_bytes": 1e8,
        "cpu_seconds": {"actors": 4.0, "learner": 6.0, "other_nodes": 1.0, "ray_daemons": 9.0, "other": 3.0},
    }
    long = {
        "num_actors": 1,
        "actor_steps": 20_000,
        "learner_steps": 9_000,
        "wall_seconds": 50.0,
        "loopback_bytes": 2e8,
        "cpu_seconds": {"actors": 8.0, "learner": 12.0, "other_nodes": 2.0, "ray_daemons": 11.0, "other": 9.0},
    }
    result = steady_state(short, long, seconds_per_update=1e-3)
    assert result["unit_costs"] == {
        "actor": 4e-4,
        "learner": 6e-4,
        "services": 1e-4,
        "update": 5e-4,  # 5,000 updates in the extra 10,000 steps
        "inference": 0.0,
        "background_cores": 0.1,
        "bytes_per_step": 10_000.0,
    }
    assert result["steady_cores_busy"] == 0.65  # "other" (not the program's) left out
    report = model_report({"ray_1_actors": {"runs": [short, long], **result}}, cores=2)
    entry = report["against_measured"]["ray_1_actors"]
    assert entry["own_costs"]["bottleneck"] == "cores"  # 1.9 cores / 1.1 ms: 1,727 steps/s
    assert entry["own_costs"]["error"] == round(1.9 / 1.1e-3 / 500 - 1, 3)
    # On a cluster the updates' one thread (1 / 5e-4 = 2,000 steps/s) binds before the learner host's 4 cores (6,667).
    assert report["predictions"]["ray_1_actors"]["512"]["bottleneck"] == "learner_updates"
