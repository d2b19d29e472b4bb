"""Threads launcher end to end: services, functions, terminal nodes, stop, errors."""

from __future__ import annotations

import threading

import pytest

import launch
from tests.launch import testlib


def _counter_program(n: int, log: list, terminal_waits: bool = True):
    program = launch.Program("threads")
    counter = program.add_node(launch.ServiceNode(testlib.Counter, log), "counter")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, log), "ticker")

    def terminal_worker(counter, n):
        testlib.work(counter, n)
        if terminal_waits:  # Wait for the other worker too.
            testlib.wait_until(lambda: counter.get() >= 2 * n, timeout=120)

    program.add_node(launch.FunctionNode(terminal_worker, counter, n), "w0", terminal=True)
    program.add_node(launch.FunctionNode(testlib.work, counter, n), "w1")
    return program


def test_counter_program_runs_and_stops_everything_and_hands_back_what_the_nodes_returned():
    log: list = []
    program = _counter_program(500, log)
    returned = launch.launch(program, "threads", timeout=120)  # the timeout guards a hang, it does not time the run
    # The ticker's run() returned its ticks as the program stopped; the workers returned None, which is left out.
    assert list(returned) == ["ticker"] and returned["ticker"] >= 1
    # The ticker's run() loop was stopped, services in reverse construction order.
    assert log == ["ticker", "counter"]
    assert not launch.stop_requested()  # Reset once launch() returned.
    assert not [t for t in threading.enumerate() if t.name.startswith("launch:")]


def test_handles_dereference_to_objects_nested_in_args_and_kwargs():
    seen = {}

    def inspect_args(items, mapping, *, extra):
        seen["items"] = items
        seen["mapping"] = mapping
        seen["extra"] = extra

    program = launch.Program("deref")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    holder = program.add_node(launch.ServiceNode(testlib.Holder, [counter], key={"c": counter}), "holder")
    program.add_node(
        launch.FunctionNode(inspect_args, [counter, (holder, 3)], {"h": holder}, extra={"deep": [counter]}), "inspect"
    )
    launch.launch(program, timeout=30)

    the_counter = seen["items"][0]
    assert isinstance(the_counter, testlib.Counter)
    the_holder = seen["items"][1][0]
    assert isinstance(the_holder, testlib.Holder) and seen["items"][1][1] == 3
    assert seen["mapping"]["h"] is the_holder
    assert seen["extra"]["deep"][0] is the_counter
    assert the_holder.args == ([the_counter],) and the_holder.kwargs == {"key": {"c": the_counter}}


def test_without_terminal_nodes_program_ends_when_all_work_is_done():
    log: list = []
    program = launch.Program("no-terminal")
    counter = program.add_node(launch.ServiceNode(testlib.Counter, log), "counter")
    for i in range(3):
        program.add_node(launch.FunctionNode(testlib.work, counter, 100), f"w{i}")
    launch.launch(program, timeout=30)
    assert log == ["counter"]


@pytest.mark.reverb
def test_reverb_node_dereferences_to_address_in_threads(tmp_path):
    result = str(tmp_path / "reverb.json")
    program = launch.Program("reverb-threads")
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    replay = program.add_node(launch.ReverbNode(testlib.reverb_tables, checkpoint_dir=str(checkpoints)), "replay")
    program.add_node(
        launch.FunctionNode(testlib.roundtrip_reverb, replay, result, checkpoint=True), "user", terminal=True
    )
    launch.launch(program, timeout=60)
    import json

    with open(result) as f:
        data = json.load(f)
    assert data["data"] == [7, 11]
    assert data["address"].startswith("localhost:")
    assert data["checkpoint"].startswith(str(checkpoints))
    assert any(checkpoints.iterdir())


def test_function_error_is_node_error_with_label_and_traceback():
    log: list = []
    program = launch.Program("error")
    counter = program.add_node(launch.ServiceNode(testlib.Counter, log), "counter")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, log), "ticker")
    program.add_node(launch.FunctionNode(testlib.fail, "kaboom"), "bad_worker")
    program.add_node(launch.FunctionNode(testlib.until_stopped), "terminal_forever", terminal=True)
    with pytest.raises(launch.NodeError) as info:
        launch.launch(program, timeout=30, grace_period=0.5)
    assert info.value.label == "bad_worker"
    message = str(info.value)
    assert "'bad_worker'" in message
    assert "Traceback (most recent call last)" in message and "ValueError: kaboom" in message
    assert "testlib.py" in message
    assert log == ["ticker", "counter"]  # Everything was stopped.


def test_constructor_error_is_node_error_and_built_services_are_stopped():
    log: list = []
    program = launch.Program("ctor")
    program.add_node(launch.ServiceNode(testlib.Counter, log), "counter")
    program.add_node(launch.ServiceNode(testlib.Broken), "broken")
    with pytest.raises(launch.NodeError, match="'broken'") as info:
        launch.launch(program, timeout=30)
    assert "RuntimeError: constructor exploded" in str(info.value)
    assert log == ["counter"]


def test_stop_error_is_reported():
    class BadStop:
        def stop(self):
            raise OSError("cannot stop")

    program = launch.Program("bad-stop")
    program.add_node(launch.ServiceNode(BadStop), "bad_stop")
    with pytest.raises(launch.NodeError, match="'bad_stop'") as info:
        launch.launch(program, timeout=30)
    assert "OSError: cannot stop" in str(info.value)


def test_terminal_service_without_run_is_rejected():
    program = launch.Program("idle-terminal")
    program.add_node(launch.ServiceNode(testlib.Counter), "counter", terminal=True)
    with pytest.raises(launch.GraphError, match="no run"):
        launch.launch(program, timeout=30)


@pytest.mark.timeout(120)  # the ticker runs until stopped: without the launch timeout this would hang
def test_timeout_stops_program_and_raises():
    log: list = []
    program = launch.Program("slow")
    counter = program.add_node(launch.ServiceNode(testlib.Counter, log), "counter")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, log), "ticker")
    with pytest.raises(launch.LaunchTimeout, match=r"within 0\.5 s \(unfinished: .*ticker"):
        launch.launch(program, timeout=0.5)
    assert log == ["ticker", "counter"]
    assert isinstance(launch.LaunchTimeout("x"), TimeoutError)


def test_address_is_rejected_for_threads():
    with pytest.raises(ValueError, match="address"):
        launch.launch(launch.Program("p"), "threads", address="127.0.0.1:1")
