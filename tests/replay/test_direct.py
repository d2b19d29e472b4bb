"""Replay items carried to the learner's tables over a direct authenticated connection: no reverb involved."""

from __future__ import annotations

import multiprocessing.connection
import threading
import time

import numpy as np
import pytest
from dm_env import specs

from acme import adders
from acme.replay import tables
from acme.replay.direct import RemoteReplay, RemoteTables, ReplayListener, ReplayTransportError
from acme.replay.local import RateLimiterTimeout
from acme.replay.local_client import LocalBatches, LocalReplay
from acme.testing import fakes
from tests.adders.helpers import read_all, run_episode
from tests.launch.testlib import eventually

SIGNATURE = {"obs": specs.Array((2,), np.float32), "action": specs.Array((), np.int32)}


def _spec(limiter, name="t", max_size=100) -> tables.TableSpec:
    return tables.TableSpec(name, tables.Prioritized(1.0), tables.Fifo(), max_size, limiter, SIGNATURE)


def _write(client, table: str, first: int, count: int) -> None:
    """Items ``first .. first + count - 1``, item ``i`` with obs ``[i, -i]``, action ``i`` and priority ``i + 1``."""
    writer = client.trajectory_writer(num_keep_alive_refs=1)
    for i in range(first, first + count):
        writer.append({"obs": np.array([i, -i], np.float32), "action": np.int32(i)})
        trajectory = {"obs": writer.history["obs"][-1], "action": writer.history["action"][-1]}
        writer.create_item(table, priority=float(i + 1), trajectory=trajectory)


@pytest.fixture
def served():
    """A learner's tables behind a listener on loopback, and a way to connect actors to it."""
    made = []

    def serve(*table_specs, max_in_flight=64):
        replay = LocalReplay(list(table_specs))
        listener = ReplayListener(replay, host="127.0.0.1")
        client = RemoteReplay(listener.address, list(table_specs), max_in_flight=max_in_flight)
        made.append((listener, client))
        return replay, listener, client

    yield serve
    for listener, client in made:
        listener.close()
        try:
            client.close()
        except ReplayTransportError:
            pass


def test_every_item_arrives_once_with_its_priority(served):
    replay, listener, client = served(_spec(tables.MinSize(1)))
    _write(client, "t", 0, 50)
    client.flush()
    assert listener.received == 50 and replay.server_info()["t"].current_size == 50
    table = replay.table("t")
    sample = table.sample(50)  # prioritized by 1 + i: every item is there, with its own priority
    for obs, action, priority in zip(sample.data["obs"], sample.data["action"], sample.info.priority):
        assert obs.tolist() == [action, -action] and priority == action + 1
    assert set(replay.table("t").save()["priorities"][:50].tolist()) == {float(i + 1) for i in range(50)}
    assert client.server_info()["t"].num_inserts == 50  # the learner's counters, asked over the connection


def test_an_adder_writes_the_same_items_through_it_as_into_local_tables(served):
    spec = fakes.discrete_spec(obs_shape=(3,), num_actions=2)
    signature = adders.NStepTransitionAdder.signature(spec)
    queue = tables.TableSpec.queue("q", 1000, signature)
    replay, _, client = served(queue)
    local = LocalReplay([tables.TableSpec.queue("q", 1000, signature)])
    for target in (client, local):
        adder = adders.NStepTransitionAdder(target, n_step=3, discount=0.9, priority_fns={"q": None})
        for _ in range(3):
            run_episode(adder, fakes.FakeEnvironment(spec, episode_length=7))
    client.flush()
    sent, direct = read_all(replay, "q"), read_all(local, "q")
    assert len(sent) == len(direct) == 21
    for ours, theirs in zip(sent, direct):
        for a, b in zip(np.asarray(ours.data, dtype=object), np.asarray(theirs.data, dtype=object)):
            np.testing.assert_array_equal(a, b)


def test_an_actor_waits_for_the_learners_rate_limiter(served):
    """Back-pressure: with samples asked for first, the listener's insert waits, and after ``max_in_flight``
    unacknowledged items so does the actor's next insert; each sample lets one more item through."""
    limiter = tables.SampleToInsertRatio(samples_per_insert=1.0, min_size_to_sample=5, error_buffer=2.0)
    in_flight = 4
    replay, listener, client = served(_spec(limiter), max_in_flight=in_flight)
    table = replay.table("t")
    # Before any sample the limiter lets inserts * samples_per_insert reach its upper bound: 7 items.
    full = int(limiter.bounds[1] / limiter.samples_per_insert)
    started, returned = [], []  # the items whose insert the actor began, and those whose insert came back

    def write() -> None:
        for i in range(40):
            started.append(i)
            _write(client, "t", i, 1)
            returned.append(i)
        client.flush()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    for samples in range(3):
        held = full + samples  # what the limiter lets the table hold after this many samples
        # The actor's insert of item held + 4 begins only once item held - 1 was acknowledged, and cannot come back
        # before item held is: the listener holds that one until a sample makes room.
        assert eventually(lambda: len(started) > held + in_flight, timeout=30), (started, listener.received)
        assert len(started) == held + in_flight + 1 and len(returned) == held + in_flight and writer.is_alive()
        assert listener.received == held and len(table) == held and not table.can_insert()
        table.sample(1, timeout=10)
    deadline = time.monotonic() + 30
    while writer.is_alive():
        assert time.monotonic() < deadline, "the actor never finished"
        try:
            table.sample(1, timeout=0.2)
        except RateLimiterTimeout:  # the limiter wants inserts now: they are on their way
            pass
    assert listener.received == 40 and returned == list(range(40))


def test_a_peer_without_the_key_is_refused_and_the_others_go_on(served):
    replay, listener, client = served(_spec(tables.MinSize(1)))
    host, port, _ = listener.address
    with pytest.raises(multiprocessing.connection.AuthenticationError):
        multiprocessing.connection.Client((host, port), authkey=b"not the key")
    _write(client, "t", 0, 3)
    client.flush()
    assert replay.server_info()["t"].current_size == 3


def test_a_refused_item_and_a_gone_listener_fail_the_actor_with_the_reason(served):
    replay, listener, client = served(_spec(tables.MinSize(1)))
    wrong = [np.zeros((3,), np.float32), np.int32(0)]  # obs of 3 where the signature has 2
    client.table("t").insert_checked(wrong, 1.0)
    with pytest.raises(ReplayTransportError, match=r"refused an item for table 't'.*shape \(3,\)"):
        client.flush()
    with pytest.raises(ReplayTransportError, match="refused"):  # and on every later call
        _write(client, "t", 0, 1)
    assert replay.server_info()["t"].current_size == 0

    _, listener, client = served(_spec(tables.MinSize(1)))
    listener.close()
    with pytest.raises(ReplayTransportError, match="is gone"):
        for i in range(100):  # the first sends may still be buffered by the socket
            _write(client, "t", i, 1)
            client.flush()
    # A late peer: refused at once, or (when the closed listener's accept was already waiting) connected and then
    # dropped before any item is taken.
    with pytest.raises(ReplayTransportError, match="Cannot reach the replay listener|is gone"):
        late = RemoteReplay(listener.address, [_spec(tables.MinSize(1))])
        _write(late, "t", 0, 1)
        late.flush()


def test_a_learner_apart_from_the_tables_samples_them_as_local_ones_and_updates_their_priorities(served):
    """A replay node (``replay="server"``): the learner's ``RemoteTables`` samples through ``LocalBatches`` as
    from a ``LocalReplay``, waits in the node for the rate limiter, writes priorities and gets the tables' state."""
    limiter = tables.SampleToInsertRatio(samples_per_insert=2.0, min_size_to_sample=10, error_buffer=20.0)
    replay, listener, client = served(_spec(limiter))
    learner = RemoteTables(listener.address)
    try:
        batches = LocalBatches(learner.table("t"), batch_size=4, num_batches=2)
        assert not batches.ready()  # fewer than 10 items: the limiter says no, asked in the node
        with pytest.raises(RateLimiterTimeout):
            learner.sample("t", 8, timeout=0.3)
        _write(client, "t", 0, 20)
        client.flush()
        assert batches.ready()
        stack = next(batches)
        assert stack.data["obs"].shape == (2, 4, 2) and stack.info.key.shape == (2, 4)
        for obs, action in zip(stack.data["obs"].reshape(-1, 2), stack.data["action"].reshape(-1)):
            assert obs.tolist() == [action, -action]  # items as written, whole
        keys = [int(k) for k in stack.info.key.reshape(-1)]
        learner.mutate_priorities("t", {key: 100.0 for key in keys})
        state = learner.save()
        saved = dict(zip(state["t"]["keys"].tolist(), state["t"]["priorities"].tolist()))
        assert all(saved[key] == 100.0 for key in keys) and len(state["t"]["keys"]) >= 20
        assert learner.server_info()["t"].num_samples == 8 == replay.server_info()["t"].num_samples
        with pytest.raises(KeyError, match=r"No replay table 'u'; the tables are \['t'\]"):
            learner.table("u")
    finally:
        learner.close()
    listener.close()  # refused, or (a closed listener's waiting accept can take one more peer) dropped at once
    with pytest.raises(ReplayTransportError, match=r"Cannot reach the replay node|replay node at .* is gone"):
        RemoteTables(listener.address)


def record_listener_address(path: str) -> None:
    """A Ray node's function: opens a listener where a learner would (no host given) and writes its address."""
    listener = ReplayListener(LocalReplay([_spec(tables.MinSize(1))]))
    try:
        with open(path, "w") as f:
            f.write(listener.address[0])
    finally:
        listener.close()


@pytest.mark.ray
def test_in_a_ray_started_with_a_bind_address_the_listener_listens_there(tmp_path):
    """Loopback is the default (a Ray run's listeners: tests/baselines/test_exposure.py); ``--bind-address``
    (launch's ``bind_address``) opens the node, and the learner's listener with it, to that address only."""
    import launch
    from tests.exposure import network_addresses

    address = next((a for a in network_addresses() if ":" not in a), None)
    if address is None:
        pytest.skip("this machine has no IPv4 address but loopback")
    program = launch.Program("bind")
    path = tmp_path / "address.txt"
    program.add_node(launch.FunctionNode(record_listener_address, str(path)), "listener", terminal=True)
    launch.launch(program, launcher="ray", timeout=300, bind_address=address)
    assert path.read_text() == address
