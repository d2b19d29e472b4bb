"""Program graph, labels, groups, handles, configuration and validation."""

from __future__ import annotations

import collections
import dataclasses
import pathlib
import subprocess
import sys

import pytest

import launch
from launch.handles import find_handles, map_handles
from tests.launch import testlib

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_add_node_returns_handles_and_labels():
    program = launch.Program("p")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    worker = program.add_node(launch.FunctionNode(testlib.work, counter, 3), "w", terminal=True)
    assert isinstance(counter, launch.Handle) and counter.label == "counter"
    assert program.labels == ("counter", "w")
    assert program.terminal_labels == ("w",)
    assert program.get(worker).node.args == (counter, 3)
    assert counter in program and "w" in program and "nope" not in program
    assert len(program) == 2
    assert program.dependencies("w") == ("counter",)


def test_default_labels_are_derived_and_made_unique():
    program = launch.Program("p")
    first = program.add_node(launch.FunctionNode(testlib.work, None, 0))
    second = program.add_node(launch.FunctionNode(testlib.work, None, 0))
    replay = program.add_node(launch.ReverbNode(testlib.reverb_tables))
    assert (first.label, second.label, replay.label) == ("work", "work_1", "reverb")


def test_duplicate_explicit_label_is_rejected():
    program = launch.Program("p")
    program.add_node(launch.ServiceNode(testlib.Counter), "x")
    with pytest.raises(launch.GraphError, match="duplicate label 'x'"):
        program.add_node(launch.ServiceNode(testlib.Counter), "x")


def test_same_node_cannot_be_added_twice():
    program = launch.Program("p")
    node = launch.ServiceNode(testlib.Counter)
    program.add_node(node, "a")
    with pytest.raises(launch.GraphError, match="already added"):
        program.add_node(node, "b")


def test_groups_prefix_labels_and_provide_defaults():
    program = launch.Program("p")
    small = launch.Resources(num_cpus=0.5)
    with program.group("actor", resources=small, restart=launch.RestartPolicy(3)):
        a0 = program.add_node(launch.FunctionNode(testlib.work, None, 0))
        a1 = program.add_node(launch.FunctionNode(testlib.work, None, 0))
        named = program.add_node(
            launch.FunctionNode(testlib.work, None, 0), "eval", resources=launch.Resources(num_gpus=1)
        )
        with program.group("inner"):
            inner = program.add_node(launch.FunctionNode(testlib.work, None, 0))
    outside = program.add_node(launch.FunctionNode(testlib.work, None, 0), "outside")

    assert (a0.label, a1.label, named.label) == ("actor_0", "actor_1", "actor/eval")
    assert inner.label == "actor/inner_0"
    assert program.groups == {"actor": ("actor_0", "actor_1", "actor/eval"), "actor/inner": ("actor/inner_0",)}
    assert program.get(a0).resources == small
    assert program.get(a0).restart.max_restarts == 3
    assert program.get(named).resources == launch.Resources(num_gpus=1)  # Node overrides.
    assert program.get(inner).resources == small  # Inherited from the outer group.
    assert program.get(outside).resources == launch.Resources()
    assert program.get(outside).group is None and program.get(a0).group == "actor"


def test_nested_handles_are_found_and_replaced():
    program = launch.Program("p")
    a = program.add_node(launch.ServiceNode(testlib.Counter), "a")
    b = program.add_node(launch.ServiceNode(testlib.Counter), "b")
    point = collections.namedtuple("Point", "x y")
    structure = ([a, (b, 1)], {"k": {"deep": [a]}, "p": point(b, 2)}, {a})
    assert {h.label for h in find_handles(structure)} == {"a", "b"}
    mapped = map_handles(structure, lambda h: h.label.upper())
    assert mapped == (["A", ("B", 1)], {"k": {"deep": ["A"]}, "p": point("B", 2)}, {"A"})
    assert type(mapped[1]["p"]).__name__ == "Point"
    plain = {"no": [1, 2]}
    assert map_handles(plain, lambda h: None) is plain


def test_handles_are_placeholders_before_launch():
    program = launch.Program("p")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    with pytest.raises(AttributeError, match="placeholder for node 'counter'"):
        counter.increment()


def test_handle_from_another_program_is_a_graph_error():
    other = launch.Program("other")
    foreign = other.add_node(launch.ServiceNode(testlib.Counter), "counter")
    program = launch.Program("p")
    with pytest.raises(launch.GraphError, match="not a node of program 'p'") as info:
        program.add_node(launch.FunctionNode(testlib.work, foreign, 1), "w")
    assert "counter" in str(info.value)

    # Also caught at launch when the handle is smuggled in after add_node.
    late = []
    program.add_node(launch.ServiceNode(testlib.Holder, late), "holder")
    late.append({"nested": foreign})
    with pytest.raises(launch.GraphError, match="Handle\\('counter', program='other'\\)"):
        launch.launch(program)


def test_cycle_is_a_graph_error_naming_the_labels():
    program = launch.Program("p")
    a_deps: list = []
    a = program.add_node(launch.ServiceNode(testlib.Holder, a_deps), "a")
    b = program.add_node(launch.ServiceNode(testlib.Holder, a), "b")
    c = program.add_node(launch.ServiceNode(testlib.Holder, b), "c")
    program.add_node(launch.ServiceNode(testlib.Holder, a), "unrelated")
    a_deps.append(c)  # a -> c -> b -> a
    with pytest.raises(launch.GraphError, match="cycle") as info:
        launch.launch(program)
    message = str(info.value)
    assert all(f"'{label}'" in message for label in ("a", "b", "c"))
    assert "unrelated" not in message


def test_self_reference_is_a_cycle():
    program = launch.Program("p")
    deps: list = []
    a = program.add_node(launch.ServiceNode(testlib.Holder, deps), "a")
    deps.append(a)
    with pytest.raises(launch.GraphError, match="'a' -> 'a'"):
        program.construction_order()


def test_construction_order_puts_dependencies_first():
    program = launch.Program("p")
    late: list = []
    user = program.add_node(launch.ServiceNode(testlib.Holder, late), "user")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    late.append(counter)
    program.add_node(launch.FunctionNode(testlib.work, user, 0), "f")
    assert [s.label for s in program.construction_order()] == ["counter", "user", "f"]


def test_function_nodes_cannot_be_referenced():
    program = launch.Program("p")
    f = program.add_node(launch.FunctionNode(testlib.work, None, 0), "f")
    with pytest.raises(launch.GraphError, match="cannot be referenced"):
        program.add_node(launch.ServiceNode(testlib.Holder, f), "h")


def test_reverb_node_cannot_be_terminal():
    program = launch.Program("p")
    with pytest.raises(launch.GraphError, match="terminal"):
        program.add_node(launch.ReverbNode(testlib.reverb_tables), "r", terminal=True)


def test_node_arguments_are_checked():
    with pytest.raises(TypeError, match="callable"):
        launch.FunctionNode(42)
    with pytest.raises(TypeError, match="callable"):
        launch.ServiceNode("not a class")
    with pytest.raises(ValueError, match="port"):
        launch.ReverbNode(testlib.reverb_tables, port=-3)
    with pytest.raises(TypeError, match="launch node"):
        launch.Program("p").add_node(testlib.work)


def test_resources_and_restart_policy_validation():
    assert launch.Resources().num_cpus is None
    resources = launch.Resources(num_cpus=1.5, num_gpus=0.25, custom={"tpu": 1})
    assert resources.custom["tpu"] == 1
    assert hash(resources) == hash(launch.Resources(num_cpus=1.5, num_gpus=0.25, custom={"tpu": 1}))
    with pytest.raises(TypeError):
        resources.custom["tpu"] = 2  # Frozen mapping.
    with pytest.raises(dataclasses.FrozenInstanceError):
        resources.num_cpus = 2  # Frozen dataclass.
    with pytest.raises(ValueError, match="num_cpus must be >= 0"):
        launch.Resources(num_cpus=-1)
    with pytest.raises(ValueError, match="num_gpus must be >= 0"):
        launch.Resources(num_gpus=-0.5)
    with pytest.raises(ValueError, match=r"custom\['x'\] must be >= 0"):
        launch.Resources(custom={"x": -1})
    with pytest.raises(TypeError, match="must be a number"):
        launch.Resources(num_cpus="2")
    assert launch.RestartPolicy().max_restarts == 0
    with pytest.raises(ValueError, match="max_restarts must be >= 0"):
        launch.RestartPolicy(max_restarts=-1)
    with pytest.raises(TypeError):
        launch.RestartPolicy(max_restarts=1.5)
    with pytest.raises(TypeError, match="launch.Resources"):
        launch.Program("p").add_node(launch.FunctionNode(testlib.work, None, 0), resources={"num_cpus": 1})


def test_ray_actor_options_mapping():
    from launch.ray_launcher import actor_options

    program = launch.Program("p")
    plain = program.add_node(launch.FunctionNode(testlib.work, None, 0), "plain")
    rich = program.add_node(
        launch.FunctionNode(testlib.work, None, 0),
        "rich",
        resources=launch.Resources(num_cpus=2, num_gpus=0.5, custom={"tpu": 1}),
        restart=launch.RestartPolicy(max_restarts=4),
    )
    opts = actor_options(program.get(plain))
    assert opts["num_cpus"] == 0 and opts["num_gpus"] == 0  # Reserve nothing.
    assert opts["max_restarts"] == 0 and opts["max_task_retries"] == 0
    assert "resources" not in opts
    opts = actor_options(program.get(rich))
    assert (opts["num_cpus"], opts["num_gpus"], opts["resources"]) == (2, 0.5, {"tpu": 1})
    assert opts["max_restarts"] == 4 and opts["max_task_retries"] == -1


def test_unknown_launcher_lists_accepted_ones():
    program = launch.Program("p")
    with pytest.raises(ValueError) as info:
        launch.launch(program, launcher="processes")
    assert "'processes'" in str(info.value)
    assert "'threads'" in str(info.value) and "'ray'" in str(info.value)


def test_import_is_cheap_and_independent():
    code = (
        "import sys, launch; heavy = [m for m in ('ray', 'reverb', 'tensorflow', 'acme',"
        " 'agents', 'baselines') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
    for path in (REPO_ROOT / "launch").glob("*.py"):
        source = path.read_text()
        for package in ("acme", "agents", "baselines"):
            assert f"import {package}" not in source and f"from {package}" not in source
