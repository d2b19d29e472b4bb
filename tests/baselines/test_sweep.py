"""Sweeps as a user runs them: a grid of short DQN runs on Ray Tune, stopped by SIGTERM and resumed with the same
command, then reported; and every kind of bad input refused before anything starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from baselines.cli import main

CARTPOLE = "gymnasium:CartPole-v1"
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--grid", "learning_rte=1e-3,1e-4"], "dqn's config has no field 'learning_rte'"),
        (["--grid", "learning_rate=fast,1e-4"], "--grid learning_rate: 'fast' is refused"),
        (["--grid", "learning_rate="], "--grid learning_rate= gives no values"),
        ([], "A grid sweep needs at least one --grid"),
        (["--search", "optuna", "--range", "learning_rate=1e-4:1e-2:log"], "--search optuna needs --trials N"),
        (["--search", "optuna", "--trials", "4"], "--search optuna needs a space to search"),
        (["--grid", "n_step=1,3", "--range", "learning_rate=1e-4:1e-2"], "--range is sampled by a search"),
        (["--search", "optuna", "--trials", "2", "--range", "learning_rate=1e-2:1e-4"], "LOW < HIGH"),
        (["--grid", "n_step=1,3", "--seed", "3"], "--seed is set by the sweep for each trial"),
        (["--grid", "n_step=1,3", "--set", "n_step=5"], "n_step is swept and also given by --set"),
        (["--grid", "n_step=1,3", "--max-steps", "0"], "The trials' `run` flags are refused"),
        (["--grid", "n_step=0,3"], "is refused by dqn's config"),
        (["--grid", "n_step=1,3", "--launcher", "anakin", "--seeds", "0", "2"], "consecutive seeds"),
        (["--grid", "n_step=1,3", "--launcher", "anakin", "--asha"], "--asha stops trials one by one"),
    ],
)
def test_a_sweep_that_cannot_run_is_refused_before_anything_starts(tmp_path, capsys, flags, message):
    sweep_dir = tmp_path / "sweep"
    assert main(["sweep", "dqn", "--env", CARTPOLE, *flags, "--run-dir", str(sweep_dir)]) == 2
    assert message in capsys.readouterr().err
    assert not sweep_dir.exists()


def _sweep_command(sweep_dir: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "baselines",
        "sweep",
        "dqn",
        "--env",
        CARTPOLE,
        "--grid",
        "learning_rate=1e-3,3e-3",
        "--seeds",
        "0",
        "--max-concurrent",
        "1",
        "--max-steps",
        "2000",
        "--eval-every",
        "500",
        "--run-dir",
        sweep_dir,
    ]


def _runs(sweep_dir: str) -> dict[str, str]:
    runs = os.path.join(sweep_dir, "runs")
    return {name: os.path.join(runs, name) for name in sorted(os.listdir(runs))} if os.path.isdir(runs) else {}


@pytest.mark.ray
def test_a_grid_sweep_stopped_by_sigterm_resumes_with_the_same_command_and_is_reported(tmp_path):
    """2 learning rates x 1 seed, one trial at a time. SIGTERM once one run finished and another is under way:
    the running run saves a checkpoint, the sweep says the same command resumes it. Run again: the finished run
    is kept (its result untouched), the stopped one resumes from its checkpoint. The report has both settings and
    names the best one with its command."""
    sweep_dir = str(tmp_path / "sweep")
    log = open(tmp_path / "first.log", "w")
    sweep = subprocess.Popen(_sweep_command(sweep_dir), cwd=REPOSITORY, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and sweep.poll() is None:
        runs = _runs(sweep_dir)
        finished = [r for r in runs.values() if os.path.exists(os.path.join(r, "result.json"))]
        under_way = [
            r
            for r in runs.values()
            if r not in finished
            and os.path.exists(os.path.join(r, "evaluator.csv"))
            and len(open(os.path.join(r, "evaluator.csv")).readlines()) >= 2
        ]
        if finished and under_way:
            break
        time.sleep(0.5)
    assert sweep.poll() is None, open(tmp_path / "first.log").read()[-3000:]
    sweep.send_signal(signal.SIGTERM)
    assert sweep.wait(timeout=180) == 1
    first = open(tmp_path / "first.log").read()
    assert "each running trial saves a checkpoint first" in first and "the same command resumes it" in first, first
    stopped = under_way[0]
    assert os.listdir(os.path.join(stopped, "checkpoints")) and not os.path.exists(os.path.join(stopped, "result.json"))
    kept = {path: os.path.getmtime(os.path.join(path, "result.json")) for path in finished}

    second = subprocess.run(_sweep_command(sweep_dir), cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "Resuming the sweep" in second.stdout
    runs = _runs(sweep_dir)
    assert sorted(runs) == ["learning_rate=1e-3-seed0", "learning_rate=3e-3-seed0"]
    for path in runs.values():
        result = json.load(open(os.path.join(path, "result.json")))
        assert result["actor_steps"] >= 2000 and len(result["evaluations"]) == 4
    assert all(os.path.getmtime(os.path.join(path, "result.json")) == mtime for path, mtime in kept.items())
    assert "Resuming from checkpoint" in open(os.path.join(stopped, "output.log")).read()

    assert main(["report", "--sweep", sweep_dir]) == 0
    report = open(os.path.join(sweep_dir, "report", "README.md")).read()
    assert "| learning_rate=1e-3 | 1 |" in report and "| learning_rate=3e-3 | 1 |" in report
    assert "**Best setting: learning_rate=" in report and "python -m baselines run dqn --env" in report
    assert "over 2 session(s)" in report
    for name in ("return_vs_learning_rate.png", "learning_curves.png", "summary.json"):
        assert os.path.getsize(os.path.join(sweep_dir, "report", name)) > 0


@pytest.mark.ray
@pytest.mark.parametrize(
    "flags, expected_settings",
    [
        # Optuna samples the learning rate (4 significant digits) for 2 settings; ASHA may stop one early.
        (["--search", "optuna", "--trials", "2", "--range", "learning_rate=1e-4:1e-2:log", "--asha"], 2),
        # On the device: one trial per n_step, its 2 seeds x 2 learning rates in one vmapped call.
        (
            ["--env", "jax:CartPole-v1", "--launcher", "anakin", "--grid", "learning_rate=1e-3,3e-3"]
            + ["--grid", "n_step=1,3", "--seeds", "0", "1"],
            4,
        ),
    ],
)
def test_an_optuna_search_and_an_anakin_grid_finish_and_are_reported(tmp_path, capsys, flags, expected_settings):
    sweep_dir = str(tmp_path / "sweep")
    argv = ["sweep", "dqn", "--env", CARTPOLE, *flags, "--max-steps", "2000", "--eval-every", "1000"]
    assert main([*argv, "--run-dir", sweep_dir]) == 0
    assert "Sweep finished" in capsys.readouterr().out
    assert main(["report", "--sweep", sweep_dir]) == 0
    summary = json.load(open(os.path.join(sweep_dir, "report", "summary.json")))
    assert len(summary["settings"]) == expected_settings
    for setting in summary["settings"]:
        assert 1e-4 <= float(setting["setting"]["learning_rate"]) <= 1e-2
        if "--launcher" in flags:
            assert setting["seeds"] == [0, 1] and setting["finished"] == 2


def _wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_pid_file_naming_another_process_is_neither_signalled_nor_waited_for(tmp_path):
    """A run's id, once its run ended, may name an unrelated process: stopping the sweep's runs leaves that process
    alone, returns at once, and removes the stale pid files (one with another start time, one an older sweep's
    bare id)."""
    from baselines import sweep

    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        started = sweep._process_stat(unrelated.pid)[1]
        stale = {"other-start": json.dumps({"pid": unrelated.pid, "started": started - 1}), "bare": str(unrelated.pid)}
        for folder, text in stale.items():
            os.makedirs(tmp_path / "runs" / folder)
            (tmp_path / "runs" / folder / "trial.pid").write_text(text)
        begun = time.monotonic()
        sweep.stop_runs(str(tmp_path), timeout=60)
        assert time.monotonic() - begun < 30  # not the 60 s a wait on the unrelated process would take
        assert unrelated.poll() is None
        assert not any((tmp_path / "runs" / folder / "trial.pid").exists() for folder in stale)
    finally:
        unrelated.kill()
        unrelated.wait()


def test_a_trial_run_is_named_by_its_pid_file_while_it_runs_and_stopped_through_it(tmp_path):
    """A run under way is named by its pid file: stopping the sweep's runs sends it SIGTERM; once it ended, its
    pid file is gone."""
    from baselines import sweep

    run_dir = tmp_path / "runs" / "learning_rate=1e-3-seed0"
    run_dir.mkdir(parents=True)
    pid_file = run_dir / "trial.pid"
    status: list[int] = []
    runner = threading.Thread(
        target=lambda: status.append(
            sweep.run_process(["sleep", "60"], str(run_dir), dict(os.environ), str(tmp_path), lambda: None)
        )
    )
    runner.start()
    try:
        _wait_until(pid_file.exists)
        assert sweep._live_runs(str(tmp_path)) == [json.loads(pid_file.read_text())["pid"]]
        sweep.stop_runs(str(tmp_path), timeout=30)
        runner.join(timeout=30)
        assert status == [-signal.SIGTERM]
        assert not pid_file.exists()
        assert sweep._live_runs(str(tmp_path)) == []
    finally:
        for pid in sweep._live_runs(str(tmp_path)):
            os.kill(pid, signal.SIGKILL)
        runner.join(timeout=30)
