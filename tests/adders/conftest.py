"""Fixtures for the adder tests: in-process Reverb servers and helpers."""

from __future__ import annotations

import pytest
import reverb


@pytest.fixture
def make_client():
    """``make_client(*tables)`` starts a Reverb server and returns a client to it.

    Servers are stopped when the test ends.
    """
    servers = []

    def _make(*tables):
        server = reverb.Server(tables=list(tables), port=None)
        servers.append(server)
        return reverb.Client(f"localhost:{server.port}")

    yield _make
    for server in servers:
        server.stop()
