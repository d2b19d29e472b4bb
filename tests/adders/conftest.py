"""Fixtures for the adder tests: every adder test runs against both replay backends.

``make_client(*table_specs)`` serves ``TableSpec``\\ s with a real in-process
reverb server (``reverb``) or with ``LocalReplay`` (``local``); the golden
tests then check that both backends receive identical items.
"""

from __future__ import annotations

import pytest

from acme.replay.local_client import LocalReplay


@pytest.fixture
def make_reverb_client():
    """``make_reverb_client(*table_specs)`` starts a reverb server and returns a client to it (stopped at the end)."""
    import reverb

    from acme.replay.reverb_tables import to_reverb_table
    from launch.reverb_server import start_reverb_server

    servers = []

    def _make(*table_specs):
        server = start_reverb_server([to_reverb_table(spec) for spec in table_specs])  # no temporary directory
        servers.append(server)
        return reverb.Client(f"localhost:{server.port}")

    yield _make
    for server in servers:
        server.stop()


@pytest.fixture(params=[pytest.param("reverb", marks=pytest.mark.reverb), "local"])
def make_client(request):
    """``make_client(*table_specs)``: a client of either backend (the test runs once with each)."""
    if request.param == "reverb":
        return request.getfixturevalue("make_reverb_client")
    return lambda *table_specs: LocalReplay(list(table_specs))
