"""A small program-graph launcher: nodes as threads or as Ray actors.

Build a ``Program`` of nodes (``FunctionNode``, ``ServiceNode``,
``ReverbNode``) that refer to each other through handles, then ``launch`` it
with the ``"threads"`` or ``"ray"`` launcher. Importing this package is cheap:
``ray`` and ``reverb`` are imported only when they are used.

    program = launch.Program("demo")
    counter = program.add_node(launch.ServiceNode(Counter), "counter")
    with program.group("worker", resources=launch.Resources(num_cpus=1)):
        for _ in range(2):
            program.add_node(launch.FunctionNode(work, counter, 100))
    program.add_node(launch.FunctionNode(report, counter), "report", terminal=True)
    launch.launch(program, launcher="ray")

Handles dereference, at launch, to the service object (threads) or a
``ServiceProxy`` whose methods are blocking remote calls (Ray; non-blocking
via ``proxy.futures.method(...)``), and to ``"host:port"`` for reverb nodes.
A ``LocalServiceNode`` is a service whose users need the object itself; only
the threads launcher runs it, and other launchers refuse it before starting.
Long-running node code should poll ``launch.stop_requested()``.
"""

from launch.config import Resources, RestartPolicy, thread_environment
from launch.context import stop_requested, wait_for_stop
from launch.errors import ClusterConnectionError, GraphError, LaunchError, LaunchTimeout, NodeError, RayStartError
from launch.handles import Handle
from launch.launcher import launch
from launch.nodes import FunctionNode, LocalServiceNode, Node, ReverbNode, ServiceNode
from launch.options import LAUNCHERS, LaunchOptions
from launch.placement import Placement, placement_from_json
from launch.program import NodeSpec, Program

__all__ = [
    "ClusterConnectionError",
    "FunctionNode",
    "GraphError",
    "Handle",
    "LAUNCHERS",
    "LaunchError",
    "LaunchOptions",
    "LaunchTimeout",
    "LocalServiceNode",
    "Node",
    "NodeError",
    "NodeSpec",
    "Placement",
    "Program",
    "RayStartError",
    "Resources",
    "RestartPolicy",
    "ReverbNode",
    "ServiceNode",
    "launch",
    "placement_from_json",
    "stop_requested",
    "thread_environment",
    "wait_for_stop",
]
