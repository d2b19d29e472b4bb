"""Tests that need the ``reverb`` extra (dm-reverb, TensorFlow) are marked, and skipped with the reason on the core
stack.

``@pytest.mark.reverb`` needs dm-reverb, ``@pytest.mark.tensorflow`` needs TensorFlow
(the TensorBoard logger). Both come with ``pip install -e ".[reverb]"`` on Python 3.11
(``make test``); ``make test-current`` runs the core stack, where they are skipped.
"""

from __future__ import annotations

import importlib.util
import logging

import pytest

_NEEDS = {"reverb": "reverb", "tensorflow": "tensorflow"}


def pytest_collection_modifyitems(config, items):
    missing = {marker: module for marker, module in _NEEDS.items() if importlib.util.find_spec(module) is None}
    for item in items:
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
