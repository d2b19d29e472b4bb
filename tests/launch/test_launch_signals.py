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


@pytest.mark.parametrize("mode,signum,expected,exit_code", [
    ("run", signal.SIGTERM, "raised SystemExit 143 restored=True", 143),
    ("run", signal.SIGINT, "raised KeyboardInterrupt  restored=True", None),
    ("ctor", signal.SIGINT, "raised KeyboardInterrupt  restored=True", None),
])
def test_signal_stops_program_cleanly(tmp_path, mode, signum, expected, exit_code):
    script = tmp_path / "program.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, str(script), mode], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout.readline().strip() == "running"
        time.sleep(0.2)
        start = time.monotonic()
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=15)
        assert time.monotonic() - start < 10
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
