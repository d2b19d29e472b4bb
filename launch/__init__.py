"""A small program-graph launcher: nodes as threads or as Ray actors.

Build a ``Program`` of nodes (``FunctionNode``, ``ServiceNode``,
``ReverbNode``) that refer to each other through handles, then ``launch`` it
with the ``"threads"`` or ``"ray"`` launcher. Importing this package is cheap:
``ray`` and ``reverb`` are imported only when they are used.
"""

from launch.config import Resources, RestartPolicy
from launch.context import stop_requested, wait_for_stop
from launch.errors import (ClusterConnectionError, GraphError, LaunchError, LaunchTimeout,
                           NodeError)
from launch.handles import Handle
from launch.launcher import LAUNCHERS, launch
from launch.nodes import FunctionNode, Node, ReverbNode, ServiceNode
from launch.program import NodeSpec, Program

__all__ = [
    "ClusterConnectionError",
    "FunctionNode",
    "GraphError",
    "Handle",
    "LAUNCHERS",
    "LaunchError",
    "LaunchTimeout",
    "Node",
    "NodeError",
    "NodeSpec",
    "Program",
    "Resources",
    "RestartPolicy",
    "ReverbNode",
    "ServiceNode",
    "launch",
    "stop_requested",
    "wait_for_stop",
]
