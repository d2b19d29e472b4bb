"""launch.network and the Ray address check: loopback confinement, bind addresses, non-Ray servers."""

from __future__ import annotations

import http.server
import os
import pathlib
import socket
import subprocess
import sys
import textwrap
import threading
from concurrent import futures

import pytest

import launch
from launch import network, ray_launcher
from launch.ray_launcher import check_ray_cluster
from tests import exposure
from tests.launch import testlib

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.mark.parametrize(
    "host,expected",
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.0.1.1", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host, expected):
    assert network.is_loopback(host) is expected


@pytest.mark.parametrize(
    "address,phrase",
    [
        ("my-host", "IP address"),
        ("0.0.0.0", "every interface"),
        ("::", "every interface"),
        ("203.0.113.77", "not an address of this machine"),
    ],
)
def test_bind_address_must_be_one_of_this_machine(address, phrase):
    with pytest.raises(ValueError, match=phrase):
        network.check_bind_address(address)
    network.check_bind_address("127.0.0.1")


REVERB_SERVER = textwrap.dedent("""
    import sys, time
    import reverb
    from launch import network
    from launch.reverb_server import start_reverb_server
    server = start_reverb_server([reverb.Table.queue("q", 10)])  # no checkpointer: no /tmp/tmpXXXX left
    if sys.argv[1] == "confined":
        network.confine_server(server)
    client = reverb.Client(f"localhost:{server.port}")
    client.insert(1, {"q": 1.0})
    print(server.port, client.server_info()["q"].current_size, flush=True)
    time.sleep(60)
""")


@linux_only
@pytest.mark.reverb
@pytest.mark.parametrize("mode", ["confined", "as-reverb-starts-it"])
def test_confined_reverb_server_is_reachable_on_loopback_only(tmp_path, mode):
    script = tmp_path / "server.py"
    script.write_text(REVERB_SERVER)
    process = subprocess.Popen(
        [sys.executable, str(script), mode],
        cwd=REPO_ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
    )
    try:
        port, size = map(int, process.stdout.readline().split())
        found = exposure.listeners(process.pid)
        reached = {a: exposure.accepts(a, port) for a in exposure.network_addresses()}
        assert exposure.accepts("127.0.0.1", port) and size == 1
    finally:
        process.kill()
        process.wait()
    assert [listener.port for listener in found] == [port]
    if mode == "confined":
        assert found[0].device == "lo" and not found[0].exposed
        assert not any(reached.values()), reached
    else:  # What reverb 0.14 does on its own: every interface.
        assert found[0].exposed and all(reached.values()), (found, reached)


@pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="confining to loopback (SO_BINDTODEVICE) is Linux only; elsewhere it warns and returns 0",
)
def test_restrict_to_loopback_refuses_a_port_nothing_listens_on():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(network.ExposureError, match=str(port)):
        network.restrict_to_loopback(port)


def _grpc_server_without_ray() -> tuple[object, int]:
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def test_servers_that_are_not_ray_are_refused_with_the_reason():
    http_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=http_server.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    grpc_server, grpc_port = _grpc_server_without_ray()
    cases = [
        (http_server.server_address[1], "gRPC"),
        (silent.getsockname()[1], "did not answer a Ray request within 1 s"),  # the timeout it was given
        (grpc_port, "without Ray's GCS service"),
    ]
    try:
        for port, phrase in cases:
            with pytest.raises(launch.ClusterConnectionError) as info:
                testlib.call_within(120, check_ray_cluster, f"127.0.0.1:{port}", timeout=1.0)
            assert "not a Ray cluster" in str(info.value) and phrase in str(info.value)
            assert "host:port" in str(info.value)  # says what would be accepted
    finally:
        http_server.shutdown()
        http_server.server_close()
        silent.close()
        grpc_server.stop(None)


@pytest.mark.ray
def test_a_real_ray_cluster_passes_the_check(ray_cluster, monkeypatch):
    monkeypatch.delenv("RAY_USE_TLS", raising=False)  # with it the GCS question is skipped
    host_port = ray_launcher._host_port(ray_cluster.address)
    assert host_port is not None, ray_cluster.address  # an address the check asks, not one it waves through
    assert ray_launcher._gcs_answer(host_port, timeout=30.0) is None  # the head node answers as Ray's GCS
    check_ray_cluster(ray_cluster.address)
