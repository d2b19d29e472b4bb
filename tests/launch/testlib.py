"""Node functions and services used by the launch tests.

Kept in an importable module (not in test files) so that Ray workers can
unpickle them by reference. Heavy imports (reverb, ray) stay inside functions.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import launch


def write_json(path: str, payload: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f)
    os.replace(tmp, path)


class Counter:
    """Thread-safe counter service; also records the pids reported to it."""

    def __init__(self, log: list | None = None) -> None:
        self._lock = threading.Lock()
        self._value = 0
        self._pids: list[int] = []
        self._log = log

    def increment(self, n: int = 1) -> int:
        with self._lock:
            self._value += n
            return self._value

    def get(self) -> int:
        with self._lock:
            return self._value

    def report_pid(self, pid: int) -> None:
        with self._lock:
            if pid not in self._pids:
                self._pids.append(pid)

    def pids(self) -> list[int]:
        with self._lock:
            return list(self._pids)

    def stop(self) -> None:
        if self._log is not None:
            self._log.append("counter")


class Ticker:
    """Service with a run() loop that increments a counter until stopped."""

    def __init__(self, counter, log: list | None = None, marker: str | None = None) -> None:
        self._counter = counter
        self._log = log
        self._marker = marker
        self.ticks = 0

    def run(self) -> int:
        """Ticks until stopped; returns the ticks (what ``launch`` hands back, read as the program stops)."""
        while not launch.wait_for_stop(0.02):
            self._counter.increment()
            self.ticks += 1
        return self.ticks

    def stop(self) -> None:
        if self._log is not None:
            self._log.append("ticker")
        if self._marker is not None:
            with open(self._marker, "w") as f:
                f.write("stopped")


class PidReporter:
    """run() loop: report this process's pid to the counter and increment it."""

    def __init__(self, counter) -> None:
        self._counter = counter

    def run(self) -> None:
        pid = os.getpid()
        while not launch.wait_for_stop(0.05):
            self._counter.report_pid(pid)
            self._counter.increment()


class Broken:
    """Service whose constructor raises."""

    def __init__(self, *unused) -> None:
        raise RuntimeError("constructor exploded")


class Holder:
    """Service that keeps its (dereferenced) constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        self.args = args
        self.kwargs = kwargs


def work(counter, n: int) -> None:
    for _ in range(n):
        counter.increment()


def wait_until(predicate, timeout: float = 120.0, interval: float = 0.05) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("condition not met in time")
        time.sleep(interval)


def eventually(predicate, timeout: float = 120.0, interval: float = 0.05) -> bool:
    """Whether ``predicate()`` became true within ``timeout`` seconds (polled), for a test to assert with its own
    message. The timeout guards against a hang; it is not a speed check."""
    try:
        wait_until(predicate, timeout, interval)
    except TimeoutError:
        return False
    return True


def call_within(deadline: float, function, *args, **kwargs):
    """``function(*args, **kwargs)`` on a daemon thread: what it returns, or raises; a TimeoutError if it has not
    returned within ``deadline`` seconds. The deadline guards against a hang; it is not a speed check."""
    outcome: dict = {}
    returned = threading.Event()

    def call() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the caller
            outcome["error"] = error
        finally:
            returned.set()

    threading.Thread(target=call, name=f"call_within:{getattr(function, '__name__', function)}", daemon=True).start()
    if not returned.wait(deadline):
        raise TimeoutError(f"{getattr(function, '__name__', function)} did not return within {deadline:g} s (hung?)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def fail(message: str) -> None:
    raise ValueError(message)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def until_stopped() -> None:
    """Loops until the launcher requests a stop."""
    while not launch.wait_for_stop(0.05):
        pass


def check_counter_proxy(counter, target: int, result_path: str) -> int:
    """Waits for ``target`` counts, then exercises the proxy API (Ray); returns this process's pid."""
    import pickle

    import ray

    wait_until(lambda: counter.get() >= target)
    result = {
        "count": counter.get(),
        "future": ray.get(counter.futures.get()),
        "proxy_type": type(counter).__name__,
        "pid": os.getpid(),
    }
    try:
        counter.no_such_method()
    except AttributeError as e:
        result["missing_method_error"] = str(e)
    result["repickled_get"] = pickle.loads(pickle.dumps(counter)).get() >= target
    write_json(result_path, result)
    return os.getpid()


def reverb_tables():
    import reverb

    return [
        reverb.Table(
            name="items",
            sampler=reverb.selectors.Uniform(),
            remover=reverb.selectors.Fifo(),
            max_size=100,
            rate_limiter=reverb.rate_limiters.MinSize(1),
        )
    ]


def roundtrip_reverb(address: str, result_path: str, checkpoint: bool = False) -> None:
    """Inserts one item into the reverb server at ``address`` and samples it back."""
    import reverb

    client = reverb.Client(address)
    client.insert([7, 11], priorities={"items": 1.0})
    sample = next(iter(client.sample("items", num_samples=1)))
    data = [int(x) for x in sample[0].data]
    result = {"address": address, "data": data}
    if checkpoint:
        result["checkpoint"] = client.checkpoint()
    write_json(result_path, result)


def kill_reporter_once(counter, result_path: str) -> None:
    """SIGKILLs the PidReporter's process once; checks it comes back and counts."""
    wait_until(lambda: counter.pids() and counter.get() >= 5)
    first_pid = counter.pids()[0]
    os.kill(first_pid, signal.SIGKILL)
    count_at_kill = counter.get()
    wait_until(lambda: len(counter.pids()) >= 2)
    second_pid = counter.pids()[1]
    count_at_restart = counter.get()
    wait_until(lambda: counter.get() >= count_at_restart + 5)
    write_json(
        result_path,
        {
            "first_pid": first_pid,
            "second_pid": second_pid,
            "count_at_kill": count_at_kill,
            "count_after": counter.get(),
        },
    )


def announce_then_wait(path: str) -> None:
    """Writes this process's pid to ``path``, then loops until stopped."""
    write_json(path, {"pid": os.getpid()})
    until_stopped()


def announce_once_ticking(counter, path: str) -> None:
    """Waits until the ticker has ticked (so it is constructed and running, and launch will call its stop()), then
    writes this process's pid to ``path`` and loops until stopped."""
    while counter.get() < 1:
        if launch.wait_for_stop(0.05):
            return
    announce_then_wait(path)


RAY_DRIVER_SCRIPT = """
import sys
import launch
from tests.launch import testlib

address, running_path, marker = sys.argv[1:4]
program = launch.Program("ray-signal")
counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
program.add_node(launch.ServiceNode(testlib.Ticker, counter, marker=marker), "ticker")
program.add_node(launch.FunctionNode(testlib.announce_once_ticking, counter, running_path), "announcer")
try:
    launch.launch(program, "ray", address=address)
except BaseException as e:
    import ray
    print("RAISED", type(e).__name__, getattr(e, "code", None), ray.is_initialized(), flush=True)
    raise
"""
