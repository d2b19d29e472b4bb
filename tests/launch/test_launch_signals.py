"""SIGINT / SIGTERM while the threads launcher runs (in a subprocess)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from launch.ray_launcher import FORCED_KILL
from tests.launch.testlib import eventually

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    import launch

    class Looper:
        def run(self):
            print("running", flush=True)
            while not launch.wait_for_stop(0.05):
                pass
            print("run returned", flush=True)

        def stop(self):
            print("stopped", flush=True)

    class SlowStart:
        def __init__(self):
            print("running", flush=True)
            time.sleep(120)

    program = launch.Program("signals")
    program.add_node(launch.ServiceNode(Looper), "looper")
    if sys.argv[1] == "ctor":
        program.add_node(launch.ServiceNode(SlowStart), "slow")
    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    try:
        launch.launch(program)
    except BaseException as e:
        restored = handlers == (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
        print(f"raised {type(e).__name__} {getattr(e, 'code', '')} restored={restored}",
              flush=True)
        raise
""")


@pytest.mark.parametrize(
    "mode,signum,expected,exit_code",
    [
        ("run", signal.SIGTERM, "raised SystemExit 143 restored=True", 143),
        ("run", signal.SIGINT, "raised KeyboardInterrupt  restored=True", None),
        ("ctor", signal.SIGINT, "raised KeyboardInterrupt  restored=True", None),
    ],
)
def test_signal_stops_program_cleanly(tmp_path, mode, signum, expected, exit_code):
    script = tmp_path / "program.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen(
        [sys.executable, str(script), mode],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "running"
        time.sleep(0.2)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=120)  # guards against a hang only
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert expected in output, output
    if mode == "run":
        assert "stopped" in output and "run returned" in output
    if exit_code is not None:
        assert proc.returncode == exit_code
    else:
        assert proc.returncode != 0 and "KeyboardInterrupt" in output


IGNORED_SCRIPT = textwrap.dedent("""
    import sys, time
    import launch

    def work(seconds, marker):
        print("running", flush=True)
        time.sleep(seconds)
        with open(marker, "w") as f:  # a file, not a print: Ray forwards a worker's prints to the driver late
            f.write("work done")

    program = launch.Program("ignored")
    program.add_node(launch.FunctionNode(work, float(sys.argv[2]), sys.argv[3]), "work", terminal=True)
    launch.launch(program, launcher=sys.argv[1])
    print("finished", flush=True)
""")


def _start_with_sigint_ignored(script: pathlib.Path, *args: str) -> subprocess.Popen:
    """Starts ``script`` as a shell's ``cmd &`` would: SIGINT inherited as ignored."""
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        cwd=REPO_ROOT,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )


def _wait_for_line(proc: subprocess.Popen, wanted: str, timeout: float) -> list[str]:
    """Lines read until one contains ``wanted`` (AssertionError with the output if it never comes)."""
    lines, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if wanted in line:
            return lines
    raise AssertionError(f"no {wanted!r} in:\n" + "".join(lines))


@pytest.mark.parametrize("launcher", ["threads", pytest.param("ray", marks=pytest.mark.ray)])
def test_inherited_ignored_sigint_stays_ignored(tmp_path, launcher):
    script = tmp_path / "ignored.py"
    script.write_text(IGNORED_SCRIPT)
    marker = tmp_path / "work_done"
    proc = _start_with_sigint_ignored(script, launcher, "3", str(marker))
    try:
        _wait_for_line(proc, "running", timeout=180)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, output
    assert "finished" in output, output
    assert FORCED_KILL not in output, output
    assert marker.read_text() == "work done"  # the node ran to its end: the signal stopped nothing


SLOW_START_SCRIPT = textwrap.dedent("""
    import pathlib, sys, time
    import launch

    class SlowStart:
        def __init__(self):
            print("constructing", flush=True)
            time.sleep(120)

    class Arrival:
        \"\"\"Touches ``path`` where it is unpickled: in a dependent's Ray worker, as that worker builds its node (and
        then waits for 'slow'). The node's argument is then None.\"\"\"

        def __init__(self, path):
            self.path = path

        def __reduce__(self):
            return pathlib.Path.touch, (pathlib.Path(self.path),)

    class Dependent:
        def __init__(self, slow, arrival):
            self.slow = slow

    program = launch.Program("slow-start")
    slow = program.add_node(launch.ServiceNode(SlowStart), "slow")
    for i in range(4):
        arrival = Arrival(pathlib.Path(sys.argv[1]) / f"dependent_{i}")
        program.add_node(launch.ServiceNode(Dependent, slow, arrival), f"dependent_{i}")
    try:
        launch.launch(program, launcher="ray", grace_period=3.0)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


@pytest.mark.ray
def test_ray_ctrl_c_while_nodes_start_stops_them_without_a_warning_each(tmp_path):
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START_SCRIPT)
    arrivals = tmp_path / "arrivals"
    arrivals.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(arrivals)],
        cwd=REPO_ROOT,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        before = _wait_for_line(proc, "constructing", timeout=180)
        # Every dependent's worker is building its node, which waits for 'slow'.
        assert eventually(lambda: len(list(arrivals.iterdir())) == 4), list(arrivals.iterdir())
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)  # guards against a hang only
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = "".join(before) + output
    assert FORCED_KILL not in output, output
    assert "interrupted" in output, output
    assert "grace period" not in output, output  # no node waited out its grace period
