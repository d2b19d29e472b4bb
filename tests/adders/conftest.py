"""Fixtures for the adder tests: each runs on local tables, and on reverb where it is installed.

``make_client(*table_specs)`` serves ``TableSpec``\\ s with ``LocalReplay``
(``local``, on every stack) or with an in-process reverb server (``reverb``,
marked ``reverb``: skipped on the core stack, which has no reverb);
``test_backends_agree`` checks that both backends receive identical items.
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
