"""Markers: what a test needs, and which tests CI runs on one stack only.

``@pytest.mark.reverb`` needs dm-reverb, ``@pytest.mark.tensorflow`` needs TensorFlow
(the TensorBoard logger). Both come with ``pip install -e ".[reverb]"`` on Python 3.11
(``make test``); on the core stack they are skipped with the reason.

``plumbing`` marks the tests of ``PLUMBING``: the command line, subprocesses,
examples, launchers and distributed programs, whose behaviour does not change
with the stack. CI runs them, with the ``slow`` learning runs and the ``ray``
tests, on the reverb stack only (``make test``); on the core stack it runs the
rest (``make test-current-unit``: ``-m "not slow and not ray and not plumbing"``),
which is where numpy 2, current jax and Python 3.12 can differ (CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal

import pytest

_NEEDS = {"reverb": "reverb", "tensorflow": "tensorflow"}

# Test modules (paths from the repository root) whose tests are all plumbing; a file or a folder (ending in /).
PLUMBING = (
    "tests/launch/",
    "tests/baselines/test_cli.py",
    "tests/baselines/test_cli_ray_flags.py",
    "tests/baselines/test_cli_signals.py",
    "tests/baselines/test_environment_families.py",
    "tests/baselines/test_exposure.py",
    "tests/baselines/test_results.py",
    "tests/experiments/test_distributed.py",
    "tests/experiments/test_distributed_ppo.py",
    "tests/experiments/test_inference.py",
    "tests/test_examples.py",
)


def pytest_configure(config):
    """Ctrl-C is live in the tests and in the processes they start, as in a terminal, however pytest was started: a
    shell starts a background job (`make test &`, CI scripts) with SIGINT ignored, every child inherits that, and
    the tests of Ctrl-C would then see a run that, by design, ignores it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # children start with the default action


def pytest_collection_modifyitems(config, items):
    missing = {marker: module for marker, module in _NEEDS.items() if importlib.util.find_spec(module) is None}
    root = str(config.rootpath)
    for item in items:
        path = os.path.relpath(str(item.path), root).replace(os.sep, "/")
        if any(path == entry or (entry.endswith("/") and path.startswith(entry)) for entry in PLUMBING):
            item.add_marker(pytest.mark.plumbing)
        if item.get_closest_marker("ray") is not None:
            # Under pytest-xdist (make test: -n 2 --dist loadgroup) the Ray tests run one after another on one
            # worker: two Ray clusters at once on this 2-core machine would only slow each other down.
            item.add_marker(pytest.mark.xdist_group("ray"))
        for marker, module in missing.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(
                    pytest.mark.skip(
                        reason=f"needs {module}, from the 'reverb' extra (Python 3.11: make test); not installed here"
                    )
                )
                break


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(autouse=True)
def _ray_shuts_down_without_a_forced_kill(request):
    """A Ray test fails if the launcher had to SIGKILL a Ray process that outlived ``ray.shutdown()``: "no process
    left" must mean a clean shutdown, not a forced one. (Tests that launch in a subprocess check its output.)"""
    if request.node.get_closest_marker("ray") is None:
        yield
        return
    from launch.ray_launcher import FORCED_KILL

    collect = _Collect()
    launch_logger = logging.getLogger("launch")
    launch_logger.addHandler(collect)
    try:
        yield
    finally:
        launch_logger.removeHandler(collect)
    forced = [message for message in collect.messages if FORCED_KILL in message]
    if forced:
        pytest.fail("Ray did not shut down cleanly: " + "; ".join(forced), pytrace=False)
