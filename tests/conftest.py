"""Markers: what a test needs, and where it runs.

``@pytest.mark.reverb`` needs dm-reverb, ``@pytest.mark.tensorflow`` needs TensorFlow
(the TensorBoard logger's TensorFlow writer). Both come with the ``reverb`` extra on
Python 3.11 (``make test-reverb``, which runs only these tests); the default stack
(``make test``) skips them with the reason. ``@pytest.mark.dm_control`` needs
dm_control, which does not install on Python 3.13 (labmaze has no wheel there).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import signal
import tempfile

import pytest
from packaging.version import Version

_NEEDS = {"reverb": "reverb", "tensorflow": "tensorflow", "dm_control": "dm_control"}
_WHY = {
    "reverb": "from the 'reverb' extra (Python 3.11: make test-reverb)",
    "tensorflow": "from the 'reverb' extra (Python 3.11: make test-reverb)",
    "dm_control": "which does not install on Python 3.13 (labmaze has no wheel there): use Python 3.12",
}


# The tests, the runs they make and the command lines they start share jax's persistent compilation cache in a
# folder new to this session, so a program compiled once (DQN's update on CartPole, an environment's step) loads in
# the next test that builds the very same program instead of compiling again (tests/agents' unit tests: 580 -> 376
# s on one core): a hit needs the same program, so nothing compiled from other code is ever run, and the folder is
# deleted when the session ends. pytest-xdist's workers start from the controller's environment, so they and every
# process they start use the same folder.
_SESSION_CACHE = "ACME_TEST_COMPILE_CACHE"
_CACHE_MADE_HERE = _SESSION_CACHE not in os.environ
if _CACHE_MADE_HERE:
    os.environ[_SESSION_CACHE] = tempfile.mkdtemp(prefix="acme-test-compile-")  # mode 0700, as the cache requires
os.environ["ACME_COMPILE_CACHE"] = os.environ[_SESSION_CACHE]


@pytest.fixture(autouse=True)
def _session_compile_cache():
    """Every test starts with the session's cache on, whatever the test before set (a run with its own
    ``compile_cache``, the cache's own tests turning it off)."""
    from acme.jax import compile_cache

    compile_cache.enable(os.environ[_SESSION_CACHE])
    yield


def pytest_sessionfinish(session):
    if _CACHE_MADE_HERE and not hasattr(session.config, "workerinput"):
        shutil.rmtree(os.environ[_SESSION_CACHE], ignore_errors=True)


def pytest_configure(config):
    """Ctrl-C is live in the tests and in the processes they start, as in a terminal, however pytest was started: a
    shell starts a background job (`make test &`, CI scripts) with SIGINT ignored, every child inherits that, and
    the tests of Ctrl-C would then see a run that, by design, ignores it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # children start with the default action
    # Under `--dist loadgroup` (make test) a pytest-xdist 3.8 worker renames each grouped test `<id>@<group>` and the
    # controller sends a group to one worker; pytest 9.2 ignores that renaming, so the groups' tests spread over the
    # workers, their module fixtures (subprocesses of minutes) run once per worker and the Ray tests overlap.
    if config.getoption("dist", "no") == "loadgroup" and Version(pytest.__version__) >= Version("9.2"):
        raise pytest.UsageError(
            f"pytest {pytest.__version__} breaks pytest-xdist's --dist loadgroup (grouped tests spread over the "
            "workers): install the pinned versions (make install, constraints-current.txt: pytest<9.2)."
        )


def pytest_collection_modifyitems(config, items):
    missing = {marker: module for marker, module in _NEEDS.items() if importlib.util.find_spec(module) is None}
    for item in items:
        if item.get_closest_marker("ray") is not None:
            # Under pytest-xdist (make test: -n 2 --dist loadgroup) the Ray tests run one after another on one
            # worker: two Ray clusters at once on this 2-core machine would only slow each other down.
            item.add_marker(pytest.mark.xdist_group("ray"))
        for marker, module in missing.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=f"needs {module}, {_WHY[marker]}; not installed here"))
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
