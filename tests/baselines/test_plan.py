"""``python -m baselines plan`` and ``run --sharding``: the learner's layout from the command line, on fake CPU
devices (each command in a process of its own, which asks for them before jax starts)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from baselines import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _baselines(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "baselines", *argv], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def test_a_plan_gives_each_devices_bytes_and_matches_xlas_compiled_arguments():
    result = _baselines("plan", "dqn", "--env", "gymnasium:CartPole-v1", "--sharding", "fsdp", "--devices", "4")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "fsdp on 4 device(s), per device:" in out and "XLA inserted: all-gather" in out
    off = float(re.search(r"arguments [\d.]+ \w+ \(([-+][\d.]+)% from the plan's\)", out)[1])
    assert abs(off) <= 10.0, out  # the plan's bytes against XLA's memory analysis


def test_auto_picks_a_layout_that_fits_and_says_why_and_a_plan_that_does_not_fit_is_refused():
    auto = _baselines("plan", "sac", "--env", "gymnasium:Pendulum-v1", "--sharding", "auto", "--devices", "2")
    assert auto.returncode == 0, auto.stderr
    assert re.search(r"auto: (replicated|data|fsdp) on \d device\(s\), estimated [\d.]+ us per update", auto.stdout)
    assert "assumed" in auto.stdout
    small = _baselines("plan", "dqn", "--sharding", "data", "--devices", "2", "--memory-per-device", "1000")
    assert small.returncode == 2 and "more than --memory-per-device" in small.stdout, small.stdout + small.stderr


def test_a_run_with_a_data_parallel_learner_trains_on_its_devices(tmp_path):
    run_dir = tmp_path / "run"
    flags = ["--max-steps", "1500", "--eval-every", "0", "--no-progress", "--run-dir", str(run_dir)]
    result = _baselines("run", "dqn", "--sharding", "data", "--devices", "2", *flags, "--set", "batch_size=32")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "result.json").read_text())
    assert summary["actor_steps"] == 1500 and summary["learner_steps"] > 0


def test_sharding_flags_are_refused_where_they_do_not_apply(tmp_path, capsys):
    for argv, message in (
        (["--devices", "2"], "--devices describes the learner's layout: add --sharding"),
        (
            ["--actor-device", "0", "--launcher", "anakin", "--env", "jax:CartPole-v1"],
            "--actor-device is for the local or threads or ray launchers",
        ),
        (["--sharding", "rules", "--sharding-rule", "w$"], "--sharding-rule must be PATTERN=AXES"),
    ):
        try:
            cli.main(["run", "dqn", "--no-progress", "--run-dir", str(tmp_path / "run"), *argv])
        except SystemExit as done:
            assert done.code == 2
        assert message in capsys.readouterr().err, argv
        assert not (tmp_path / "run").exists()


def test_an_on_device_run_over_devices_resumes_from_its_checkpoint_under_another_layout(tmp_path):
    """``--launcher anakin --sharding``: the run splits its environments over the devices, checkpoints, and a
    second run with another layout and a larger budget resumes from that checkpoint.

    The first run keeps its compiled programs in a folder it is given, and says so; the second, told
    ``--compile-cache off``, keeps none and says nothing of it (the runs of tests/jax/test_compile_cache.py's
    end-to-end check, here so that two runs check both)."""
    common = ["run", "ppo", "--env", "jax:CartPole-v1", "--launcher", "anakin", "--eval-every", "0", "--no-progress"]
    common += ["--checkpoint-dir", str(tmp_path / "checkpoints"), "--checkpoint-every-steps", "1"]
    cache = tmp_path / "cache"
    first = _baselines(
        *common, "--max-steps", "3000", "--sharding", "data", "--devices", "2", "--run-dir", str(tmp_path / "a"),
        "--compile-cache", str(cache),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    assert "on 2 device(s), data (anakin launcher)" in first.stdout
    assert f"Compiled programs are kept in {cache}" in first.stdout and os.listdir(cache), first.stdout
    before = json.loads((tmp_path / "a" / "result.json").read_text())
    second = _baselines(
        *common, "--max-steps", "6000", "--sharding", "fsdp", "--devices", "4", "--run-dir", str(tmp_path / "b"),
        "--compile-cache", "off",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Resuming from checkpoint" in second.stdout
    assert "Compiled programs are kept" not in second.stdout, second.stdout
    after = json.loads((tmp_path / "b" / "result.json").read_text())
    assert before["actor_steps"] >= 3000 and after["actor_steps"] >= 6000
    assert after["learner_steps"] > before["learner_steps"] > 0


def test_a_ray_run_without_accelerators_gives_its_learner_and_actors_the_cpu_devices_they_need():
    import launch
    from acme.experiments.options import RunOptions
    from acme.jax.sharding import LearnerSharding
    from baselines import plan

    options = RunOptions(launcher="ray", placement={"learner": launch.Resources(num_cpus=2)})
    given = plan.with_cpu_devices(options, LearnerSharding("data", devices=(1, 2)), actor_device=1).placement
    assert given == {
        "learner": launch.Resources(num_cpus=2, cpu_devices=3),  # ids 1 and 2: three devices; its CPUs kept
        "actor": launch.Resources(cpu_devices=2),
    }
    mine = RunOptions(launcher="ray", placement={"learner": launch.Resources(cpu_devices=4)})
    assert plan.with_cpu_devices(mine, LearnerSharding("data", devices=2), None).placement == mine.placement
    threads = RunOptions(launcher="threads")
    assert plan.with_cpu_devices(threads, LearnerSharding("data", devices=2), None) is threads


def test_a_plan_over_processes_gives_the_collectives_that_cross_them_and_refuses_what_cannot_run():
    result = _baselines(
        "plan", "dqn", "--env", "gymnasium:CartPole-v1", "--sharding", "data", "--devices", "2",
        "--learner-processes", "2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "data on 4 device(s), per device:" in out and "over 2 processes of 2 device(s) each" in out, out
    inserted = sum(int(n) for n in re.findall(r"(?:all-reduce|all-gather|reduce-scatter) x(\d+)", out))
    crossing = re.search(r"across processes per update: (\d+) collective\(s\).*?; ([\d.]+ \w+) out of each", out)
    assert crossing and int(crossing[1]) == inserted >= 1, out  # every one of the update's collectives crosses
    assert crossing[2] == re.search(r"collectives per update: ([\d.]+ \w+) moved", out)[1], out
    assert re.search(r"at least [\d.]+ ms per update spent waiting on them", out), out
    rules = _baselines("plan", "dqn", "--sharding", "replicated", "--learner-processes", "2")
    assert rules.returncode == 2 and "plan it with --sharding data or fsdp" in rules.stderr + rules.stdout, rules.stderr
