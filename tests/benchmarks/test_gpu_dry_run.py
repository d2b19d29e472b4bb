"""The GPU check (benchmarks/gpu.py) in its dry mode: every section runs on the CPU at tiny sizes and writes its
figures, so the script a GPU machine runs is exercised before one is lent."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS = ("ppo_scaling", "ppo_seeds", "ppo_2048_seeds", "purejaxrl", "minatar_ppo", "learner_updates", "sebulba")


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def test_the_dry_run_writes_every_section_with_figures(tmp_path):
    output = tmp_path / "gpu.json"
    completed = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "gpu.py"), "--dry-run", "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["dry_run"] is True and report["machine"]["platform"] == "cpu"
    sections = report["sections"]
    assert set(sections) == set(SECTIONS)
    for name in SECTIONS:
        expected = ("ok", "absent") if name == "purejaxrl" else ("ok",)
        assert sections[name]["status"] in expected, (name, sections[name])
        assert _positive(sections[name]["seconds"]) or sections[name]["status"] == "absent"

    for name in ("ppo_scaling", "ppo_seeds", "minatar_ppo"):
        for point in sections[name]["points"]:
            assert _positive(point["steps_per_second"]) and _positive(point["compile_seconds"]), (name, point)
    many = sections["ppo_2048_seeds"]
    assert _positive(many["wall_seconds_with_compile"]) and _positive(many["steps_per_second"])
    assert many["steps_per_seed"] == many["iterations"] * 4 * 128 and isinstance(many["extrapolated"], bool)

    peer = sections["purejaxrl"]
    if peer["status"] == "absent":
        assert peer["absent"]  # why: no peer script, no source, or no gymnax for the interpreter
        assert report["summary"]["purejaxrl"].startswith("absent: ")
    else:
        assert all(_positive(point["steps_per_second"]) for point in peer["points"])

    updates = sections["learner_updates"]
    for side in ("default_device_updates", "one_cpu_core_updates"):
        for agent in ("dqn", "sac"):
            assert updates[side][agent] and all(
                _positive(p["updates_per_second"]) for p in updates[side][agent].values()
            )
    assert set(updates["default_over_one_core"]) == {"dqn", "sac"}

    sebulba = sections["sebulba"]
    assert _positive(sebulba["steps_per_second"]) and _positive(sebulba["learner_steps"])
    assert sebulba["actor_device"].startswith("cpu")
    assert report["summary"]["statuses"] == {name: sections[name]["status"] for name in SECTIONS}


def test_the_summary_compares_seeds_and_the_peer_and_a_section_says_what_it_missed():
    from benchmarks import gpu

    sections = {
        "ppo_scaling": {"points": [{"num_envs": 2048, "num_seeds": 1, "steps_per_second": 1_000_000}]},
        "ppo_seeds": {
            "points": [
                {"num_envs": 4, "num_seeds": 1, "steps_per_second": 10_000},
                {"num_envs": 4, "num_seeds": 256, "steps_per_second": 1_280_000},
                {"num_envs": 2048, "num_seeds": 16, "steps_per_second": 8_000_000},
                {"skipped": "4 environments x 16 seeds would overrun"},
            ]
        },
        "ppo_2048_seeds": {
            "num_seeds": 2048,
            "steps_per_second": 2e7,
            "wall_seconds_with_compile": 55.0,
            "extrapolated": True,
            "meets_wall_target": True,
            "meets_steps_target": True,
        },
        "purejaxrl": {"points": [{"num_envs": 4, "num_seeds": 2048, "steps_per_second": 1e7}]},
        "minatar_ppo": {"points": [{"error": "ValueError: ..."}]},
        "learner_updates": {"default_over_one_core": {"dqn": {"256": 3.0}}},
        "sebulba": {"steps_per_second": 900},
    }
    for out in sections.values():
        out["status"] = gpu._status(out)
    assert sections["ppo_seeds"]["status"] == "partial" and sections["minatar_ppo"]["status"] == "error"
    assert sections["ppo_scaling"]["status"] == "ok"
    summary = gpu.summary_of(sections)
    # 256 seeds at 1.28M steps/s summed step 5,000/s each: training them takes twice one seed's wall-clock.
    assert summary["seeds_256_x_envs_4_wall_over_one"] == 2.0
    assert summary["seeds_16_x_envs_2048_wall_over_one"] == 2.0
    assert summary["ours_over_purejaxrl"] == {"envs_4_seeds_2048": 2.0}
    assert summary["many_seeds"]["extrapolated"] is True
    assert "minatar_ppo_best_steps_per_second" not in summary
    assert summary["statuses"]["ppo_seeds"] == "partial"


def test_a_point_that_would_overrun_is_skipped_and_says_why():
    from benchmarks import gpu

    budget = gpu.Budget(end=0.0)  # long past
    point = gpu._point(lambda: budget.need(1.0, "2048 environments"))
    assert point["skipped"].startswith("2048 environments would overrun")
