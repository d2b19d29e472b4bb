"""Ray's command-line flags: refused where they do not apply, and a bad cluster address is one clear error.

The bad addresses run in a subprocess, as a user types them; none of these tests starts Ray.
"""

from __future__ import annotations

import http.server
import os
import pathlib
import socket
import subprocess
import sys
import threading

import pytest

from baselines import cli

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cli(tmp_path: pathlib.Path, *flags: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "baselines",
        "run",
        "dqn",
        "--max-steps",
        "100",
        "--no-progress",
        "--run-dir",
        str(tmp_path / "run"),
        *flags,
    ]
    return subprocess.run(
        command,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
    )


def _assert_refused(result: subprocess.CompletedProcess, tmp_path: pathlib.Path, *phrases: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(error) == 1, result.stderr
    for phrase in phrases:
        assert phrase in error[0], error[0]
    assert not (tmp_path / "run").exists(), "a refused command left a run folder"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "flags,phrases",
    [
        pytest.param(
            ("--ray-address", "10.0.0.5:6379"),
            ("--ray-address", "--launcher ray", "local launcher"),
            id="ray-address-with-local-launcher",
        ),
        pytest.param(
            ("--launcher", "threads", "--bind-address", "127.0.0.1"),
            ("--bind-address", "--launcher ray"),
            id="bind-address-with-threads",
        ),
        pytest.param(("--dashboard",), ("--dashboard", "--launcher ray"), id="dashboard-with-local-launcher"),
        pytest.param(
            ("--launcher", "ray", "--bind-address", "0.0.0.0"),
            ("--bind-address", "every interface"),
            id="bind-address-everywhere",
        ),
        pytest.param(
            ("--launcher", "ray", "--bind-address", "my-host"),
            ("--bind-address", "IP address"),
            id="bind-address-not-an-ip",
        ),
        pytest.param(
            ("--launcher", "ray", "--ray-address", "127.0.0.1:6379", "--dashboard"),
            ("--dashboard", "--ray-address"),
            id="dashboard-with-joined-cluster",
        ),
        pytest.param(
            ("--placement", '{"actor": {"num_cpus": 1}}'),
            ("--placement", "--launcher ray"),
            id="placement-with-local-launcher",
        ),
        pytest.param(
            ("--inference", "server"),
            ("--inference", "--launcher threads or ray"),
            id="inference-with-local-launcher",
        ),
        pytest.param(
            ("--launcher", "ray", "--placement", '{"actor": {"cpus": 1}}'),
            ("placement", "num_cpus, num_gpus, custom"),
            id="placement-with-an-unknown-field",
        ),
    ],
)
def test_ray_flags_are_refused_where_they_do_not_apply(tmp_path, capsys, flags, phrases):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "dqn", "--max-steps", "100", "--run-dir", str(tmp_path / "run"), *flags])
    captured = capsys.readouterr()
    _assert_refused(
        subprocess.CompletedProcess([], exit_info.value.code, captured.out, captured.err), tmp_path, *phrases
    )


def test_unreachable_ray_address_is_one_error_with_status_2(tmp_path):
    port = _closed_port()
    result = _cli(tmp_path, "--launcher", "ray", "--ray-address", f"127.0.0.1:{port}")
    _assert_refused(result, tmp_path, f"127.0.0.1:{port}", "cannot reach", "host:port")


def test_address_that_is_not_ray_is_refused_with_the_reason(tmp_path):
    """Before the check, Ray waited on such an address with no answer after 200 s (_cli's limit guards a hang)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = _cli(tmp_path, "--launcher", "ray", "--ray-address", f"127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    _assert_refused(result, tmp_path, "not a Ray cluster")


# What ray.init raises (a bare Exception, ray/_private/node.py) when its raylet has not registered within its 30 s.
_RAYLET_TIMEOUT = (
    "The current node timed out during startup. This could happen because some of the raylet failed to startup or "
    "the GCS has become overloaded."
)
_SLOW_RAY = f"""
import sys
import ray

def init(**options):
    raise Exception({_RAYLET_TIMEOUT!r})

ray.init = init
from baselines.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("run", "dqn", "--launcher", "ray", "--max-steps", "100", "--no-progress"), id="run"),
        pytest.param(("sweep", "dqn", "--grid", "n_step=1,3", "--max-steps", "100"), id="sweep"),
    ],
)
def test_a_local_ray_that_does_not_start_in_time_is_one_error_with_status_2(tmp_path, command):
    """Ray's own 30 s start-up timeout (ray.init made to raise it at once): tried again, then one paragraph that
    says what happened and what to do, with exit status 2 and no traceback."""
    result = subprocess.run(
        [sys.executable, "-c", _SLOW_RAY, *command, "--run-dir", str(tmp_path / "run")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), LAUNCH_RAY_START_TIMEOUT="45"),
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error: " in line]
    assert len(errors) == 1, result.stderr
    for phrase in (
        "Ray's local instance did not start within",
        "(2 attempts;",
        _RAYLET_TIMEOUT,
        "less loaded machine",
        "LAUNCH_RAY_START_TIMEOUT=SECONDS (now 45)",
        "--ray-address",
    ):
        assert phrase in errors[0], errors[0]
