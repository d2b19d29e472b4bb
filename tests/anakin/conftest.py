"""Every test here is marked ``anakin``: the on-device loop needs only the core stack, and CI runs these tests there
(``make test-current-unit``), not on the reverb stack too."""

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/anakin/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.anakin)
