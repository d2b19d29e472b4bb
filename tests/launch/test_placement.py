"""Placement by configuration: which resources each node reserves, and where Ray puts it on a two-node cluster."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

import launch
from launch.config import CORES_VARIABLE
from launch.placement import placement_from_json, resolve_placement
from launch.ray_launcher import actor_options
from tests.launch.conftest import start_ray_node


def _noop() -> None:
    pass


def _program() -> launch.Program:
    program = launch.Program("placed")
    program.add_node(launch.FunctionNode(_noop), "learner", resources=launch.Resources(num_cpus=1))
    with program.group("actor", resources=launch.Resources(num_cpus=0.5)):
        program.add_node(launch.FunctionNode(_noop))
        program.add_node(launch.FunctionNode(_noop))
        with program.group("fast"):
            program.add_node(launch.FunctionNode(_noop), "special")
    program.add_node(launch.FunctionNode(_noop), "evaluator", terminal=True)
    return program


def test_a_label_wins_over_its_group_and_an_inner_group_over_an_outer_one():
    program = _program()
    gpu, label_host, group_host = (
        launch.Resources(num_gpus=1),
        launch.Resources(custom={"a": 1}),
        launch.Resources(custom={"b": 1}),
    )
    resolved = resolve_placement(
        program, {"learner": gpu, "actor": group_host, "actor/fast": label_host, "actor/fast/special": gpu}
    )
    assert resolved == {
        "learner": gpu,
        "actor_0": group_host,
        "actor_1": group_host,
        "actor/fast/special": gpu,
        "evaluator": launch.Resources(),  # not in the map: what it was added with
    }
    assert resolve_placement(program, None)["learner"] == launch.Resources(num_cpus=1)
    options = actor_options(program.get("actor_0"), resources=resolved["actor_0"])
    assert options["resources"] == {"b": 1} and options["num_cpus"] == 0


@pytest.mark.parametrize(
    "placement, error, message",
    [
        ({"learnr": launch.Resources()}, ValueError, "names no node or group.*actor, actor/fast"),
        ({"learner": {"num_cpus": 1}}, TypeError, "must be a launch.Resources"),
        ([("learner", launch.Resources())], TypeError, "must be a mapping"),
    ],
)
def test_a_bad_placement_is_refused_before_anything_starts(placement, error, message):
    with pytest.raises(error, match=message):
        launch.launch(_program(), "ray", placement=placement)


def test_the_threads_launcher_refuses_a_placement():
    with pytest.raises(ValueError, match="whose nodes are threads of this process"):
        launch.launch(_program(), "threads", placement={"learner": launch.Resources(num_cpus=1)})


def test_a_node_that_reserves_cpus_gets_a_thread_budget_in_its_environment():
    program = _program()
    options = actor_options(program.get("learner"), {"env_vars": {"PYTHONPATH": "/code"}})
    assert options["runtime_env"]["env_vars"] == {"PYTHONPATH": "/code", **launch.thread_environment(1)}
    assert "runtime_env" not in actor_options(program.get("evaluator"))  # reserves no CPU: no budget
    assert launch.Resources(num_cpus=2.5).thread_budget == 2 and launch.Resources(num_cpus=0.5).thread_budget == 1
    assert (
        launch.thread_environment(3)["XLA_FLAGS"] == "--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=3"
    )
    with pytest.raises(ValueError, match="positive integer"):
        launch.thread_environment(0)


def test_a_node_pinned_to_cores_gets_them_and_a_thread_each_in_its_environment():
    pinned = launch.Resources(cores=[1, 0])
    assert pinned.cores == (1, 0) and pinned.thread_budget == 2
    assert pinned == launch.Resources(cores=(1, 0)) and hash(pinned) == hash(launch.Resources(cores=(1, 0)))
    assert pinned != launch.Resources() and pickle.loads(pickle.dumps(pinned)) == pinned
    assert launch.Resources(num_cpus=3, cores=(0,)).thread_budget == 3  # reserved CPUs decide the budget
    program = _program()
    options = actor_options(program.get("evaluator"), resources=launch.Resources(cores=(0,)))
    assert options["runtime_env"]["env_vars"] == {**launch.thread_environment(1), CORES_VARIABLE: "0"}
    for cores in ((), (0, 0), (-1,), ("0",), (True,), "01", 1.0):
        with pytest.raises(ValueError, match="Resources.cores must be a non-empty sequence of distinct core numbers"):
            launch.Resources(cores=cores)


_PIN_SCRIPT = """
import os, sys, threading, json
from launch.config import pin_process
done = threading.Event()
allowed = os.sched_getaffinity(0)
core = max(allowed)

def spawn_until(stop):  # starts threads until told to stop, so some start during the walk over threads
    while not stop.is_set():
        threading.Thread(target=done.wait, daemon=True).start()

def outside(core):  # threads of this process allowed elsewhere than on core
    count = 0
    for thread_id in os.listdir("/proc/self/task"):
        try:
            count += os.sched_getaffinity(int(thread_id)) != {core}
        except ProcessLookupError:  # a joined thread can still be listed while it exits
            pass
    return count

sys.setswitchinterval(1e-6)  # the spawners run between the walk's steps
missed = []
for _ in range(10):
    os.sched_setaffinity(0, allowed)  # threads started from here on begin unpinned
    for _ in range(100):  # listed before the spawners in the walk
        threading.Thread(target=done.wait, daemon=True).start()
    stop = threading.Event()
    spawners = [threading.Thread(target=spawn_until, args=(stop,)) for _ in range(2)]
    for spawner in spawners:
        spawner.start()
    pin_process((core,))
    stop.set()
    for spawner in spawners:
        spawner.join()
    missed.append(outside(core))
after = threading.Thread(target=done.wait)
after.start()
threads = len(os.listdir("/proc/self/task"))
after_mask = sorted(os.sched_getaffinity(after.native_id))
done.set()
try:
    pin_process((os.cpu_count() + 5,))
except ValueError as error:
    message = str(error)
print(json.dumps({"core": core, "missed": missed, "threads": threads, "after": after_mask, "error": message}))
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning to one core of one changes no mask")
def test_pinning_holds_every_thread_even_those_started_while_it_runs_and_refuses_missing_cores():
    """In a process of its own (pinning pytest's would slow the rest of the suite). In each of 10 rounds, two unpinned
    threads keep starting threads while ``pin_process`` walks the process's threads: a single walk misses some of
    those (they keep the old mask), in most runs of this test."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", _PIN_SCRIPT], capture_output=True, text=True, cwd=root, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["threads"] >= 1000 and result["missed"] == [0] * 10
    assert result["after"] == [result["core"]]  # a thread started after pinning inherits it
    assert "names cores this machine does not offer the node's process; it may run on" in result["error"]


def test_a_node_given_cpu_devices_gets_them_in_its_environment():
    """The Ray run of tests/jax/test_sharding.py shows jax reading it in the node's process."""
    devices = launch.Resources(cpu_devices=3)
    assert pickle.loads(pickle.dumps(devices)) == devices and devices != launch.Resources()
    options = actor_options(_program().get("evaluator"), resources=devices)
    assert options["runtime_env"]["env_vars"]["JAX_NUM_CPU_DEVICES"] == "3"
    assert options["runtime_env"]["env_vars"]["XLA_FLAGS"].split()[-1] == "--xla_force_host_platform_device_count=3"
    # With a thread budget, XLA's flags keep the thread settings beside the device count (the flag older jax reads).
    budgeted = actor_options(_program().get("evaluator"), resources=launch.Resources(num_cpus=1, cpu_devices=2))
    assert budgeted["runtime_env"]["env_vars"]["XLA_FLAGS"].split() == [
        "--xla_cpu_multi_thread_eigen=false",
        "intra_op_parallelism_threads=1",
        "--xla_force_host_platform_device_count=2",
    ]
    for count in (0, -1, True, 2.0, "2"):
        with pytest.raises(ValueError, match="Resources.cpu_devices must be an integer >= 1 or None"):
            launch.Resources(cpu_devices=count)


def test_a_placement_reads_from_json():
    placement = placement_from_json(
        '{"actor": {"num_cpus": 1, "custom": {"right": 1}}, "learner": {"num_gpus": 0.5, "cores": [0], '
        '"cpu_devices": 2}}'
    )
    assert placement == {
        "actor": launch.Resources(num_cpus=1, custom={"right": 1}),
        "learner": launch.Resources(num_gpus=0.5, cores=(0,), cpu_devices=2),
    }
    for text, message in (("[1]", "JSON object"), ("{", "not valid JSON"), ('{"actor": {"cpus": 1}}', "fields")):
        with pytest.raises(ValueError, match=message):
            placement_from_json(text)


def report_node(label: str, directory: str) -> None:
    """Writes the custom resources of the Ray node this node runs on to ``directory/<label>.json``."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    node = next(n for n in ray.nodes() if n["NodeID"] == node_id)
    custom = sorted(name for name in node["Resources"] if name in ("left", "right"))
    with open(os.path.join(directory, label.replace("/", "_") + ".json"), "w") as f:
        json.dump(custom, f)
    with open(os.path.join(directory, label.replace("/", "_") + ".xla_flags"), "w") as f:
        f.write(os.environ.get("XLA_FLAGS", "unset"))
    masks = {tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir("/proc/self/task")}
    with open(os.path.join(directory, label.replace("/", "_") + ".cores"), "w") as f:
        json.dump(sorted(masks), f)  # the distinct core sets of the process's threads


@pytest.fixture(scope="module")
def two_node_cluster():
    """Two `ray start` processes on loopback: a head with resource "left" and a worker with "right"."""
    head = start_ray_node(resources={"left": 4}, num_cpus=1)
    worker = None
    try:
        worker = start_ray_node(resources={"right": 4}, join=head.address, num_cpus=1)
        yield head
    finally:
        if worker is not None:
            worker.stop()
        head.stop()


@pytest.mark.ray
def test_nodes_land_on_the_machines_the_placement_names(two_node_cluster, tmp_path):
    program = launch.Program("two-machines")
    program.add_node(launch.FunctionNode(report_node, "learner", str(tmp_path)), "learner", terminal=True)
    with program.group("actor"):
        for i in range(2):
            program.add_node(launch.FunctionNode(report_node, f"actor_{i}", str(tmp_path)), terminal=True)
    program.add_node(launch.FunctionNode(report_node, "evaluator", str(tmp_path)), "evaluator", terminal=True)
    last_core = max(os.sched_getaffinity(0))
    placement = {
        "learner": launch.Resources(num_cpus=1, custom={"left": 1}, cores=(0,)),
        "actor": launch.Resources(custom={"right": 1}, cores=(last_core,)),
        "evaluator": launch.Resources(custom={"right": 1}),
    }

    launch.launch(program, "ray", address=two_node_cluster.address, placement=placement, timeout=240)

    assert _landed(tmp_path) == {
        "learner": ["left"],
        "actor_0": ["right"],
        "actor_1": ["right"],
        "evaluator": ["right"],
    }
    # The learner reserves a CPU, so its process holds XLA to one thread; the others reserve none.
    assert (tmp_path / "learner.xla_flags").read_text() == launch.thread_environment(1)["XLA_FLAGS"]
    assert (tmp_path / "actor_0.xla_flags").read_text() == launch.thread_environment(1)["XLA_FLAGS"]  # 1 core
    assert (tmp_path / "evaluator.xla_flags").read_text() == os.environ.get("XLA_FLAGS", "unset")
    # Every thread of the pinned nodes' processes runs on the cores the map names.
    assert json.loads((tmp_path / "learner.cores").read_text()) == [[0]]
    assert json.loads((tmp_path / "actor_1.cores").read_text()) == [[last_core]]

    # The same program with the map turned around: the learner moves, no node code changes.
    for name in os.listdir(tmp_path):
        os.remove(tmp_path / name)
    left, right = launch.Resources(custom={"left": 1}), launch.Resources(custom={"right": 1})
    flipped = {"learner": right, "actor": left, "evaluator": left}
    launch.launch(program, "ray", address=two_node_cluster.address, placement=flipped, timeout=240)
    assert _landed(tmp_path) == {"learner": ["right"], "actor_0": ["left"], "actor_1": ["left"], "evaluator": ["left"]}


def _landed(directory) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in directory.iterdir() if p.suffix == ".json"}
