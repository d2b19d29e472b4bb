"""Tests that need the ``reverb`` extra (dm-reverb, TensorFlow) are marked, and skipped with the reason on the core
stack.

``@pytest.mark.reverb`` needs dm-reverb, ``@pytest.mark.tensorflow`` needs TensorFlow
(the TensorBoard logger). Both come with ``pip install -e ".[reverb]"`` on Python 3.11
(``make test``); ``make test-current`` runs the core stack, where they are skipped.
"""

from __future__ import annotations

import importlib.util

import pytest

_NEEDS = {"reverb": "reverb", "tensorflow": "tensorflow"}


def pytest_collection_modifyitems(config, items):
    missing = {marker: module for marker, module in _NEEDS.items() if importlib.util.find_spec(module) is None}
    for item in items:
        for marker, module in missing.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(
                    pytest.mark.skip(
                        reason=f"needs {module}, from the 'reverb' extra (Python 3.11: make test); not installed here"
                    )
                )
                break
