"""The ``launch()`` entry point: picks a backend, handles signals and outcome."""

from __future__ import annotations

from launch import network
from launch._outcome import Deadline
from launch._signals import SignalGuard
from launch.errors import LaunchTimeout
from launch.placement import Placement, resolve_placement
from launch.program import Program

LAUNCHERS = ("threads", "ray")


def launch(
    program: Program,
    launcher: str = "threads",
    address: str | None = None,
    timeout: float | None = None,
    *,
    grace_period: float = 5.0,
    bind_address: str | None = None,
    dashboard: bool = False,
    placement: Placement | None = None,
) -> None:
    """Runs ``program`` and blocks until it ends.

    The program ends when every terminal node has finished (or, with no
    terminal nodes, when every function and every service ``run()`` has
    returned). Then all nodes are stopped: the stop event is set (see
    ``launch.stop_requested``) and services' ``stop()`` are called in reverse
    construction order; node threads/actors get ``grace_period`` seconds to
    return before they are abandoned (threads) or killed (Ray actors).

    Args:
      program: the program to run.
      launcher: ``"threads"`` (every node a thread of this process) or
        ``"ray"`` (every node a Ray actor).
      address: Ray only. ``None`` starts a local Ray instance that is shut
        down at the end; otherwise the address of a running cluster to join
        (only the program's own actors are killed at the end). If Ray is
        already initialized in this process, that connection is reused.
        A local Ray instance, and every reverb node of the threads launcher
        or of a local Ray instance, listens on loopback only.
      bind_address: Ray only, when it starts a local instance: an IP address
        of this machine that Ray takes as its node address, so that other
        machines can reach it. Ray then listens on every interface with its
        gRPC servers (on ``bind_address`` with its HTTP ones), and so do
        reverb nodes. ``None`` keeps everything on loopback.
      dashboard: Ray only, when it starts a local instance: also start Ray's
        dashboard (on 127.0.0.1, or on ``bind_address``).
      placement: Ray only: node label or group -> ``launch.Resources`` the node (each node of the group)
        reserves instead of those it was added with; Ray places it on a machine that has them. A label
        wins over its group, an inner group over an outer one (see ``launch.placement``).
      timeout: seconds after which the program is stopped and
        ``LaunchTimeout`` is raised.
      grace_period: seconds given to nodes to return once stop is requested.

    Raises:
      ValueError: unknown launcher, or bad arguments.
      GraphError: invalid program graph (checked before anything starts).
      NodeError: a node raised (constructor, run, function, stop) or its
        process died without restarts left; carries the label and traceback.
      ClusterConnectionError: ``address`` could not be reached or joined.
      LaunchTimeout: ``timeout`` expired.
      KeyboardInterrupt / SystemExit: SIGINT / SIGTERM received (after a
        clean shutdown; the previous signal handlers are restored).
    """
    if launcher not in LAUNCHERS:
        raise ValueError(
            f"unknown launcher {launcher!r}; accepted launchers: " + ", ".join(repr(name) for name in LAUNCHERS)
        )
    if not isinstance(program, Program):
        raise TypeError(f"launch() expects a launch.Program, got {program!r}")
    if address is not None and launcher != "ray":
        raise ValueError(f"address is only used by the 'ray' launcher, not {launcher!r}")
    _check_local_ray_options(launcher, address, bind_address, dashboard)
    if timeout is not None and not timeout >= 0:
        raise ValueError(f"timeout must be >= 0 or None, got {timeout!r}")
    if not grace_period >= 0:
        raise ValueError(f"grace_period must be >= 0, got {grace_period!r}")
    program.construction_order()  # Validate the graph before anything starts.
    if placement is not None and launcher != "ray":
        raise ValueError(
            f"placement maps nodes to the resources Ray schedules them by; the {launcher!r} launcher runs every "
            "node as a thread of this process. Use launcher='ray', or leave placement out."
        )
    resolve_placement(program, placement)  # Validate the map before anything starts.
    for spec in program.nodes:
        if spec.node.launchers is not None and launcher not in spec.node.launchers:
            raise ValueError(
                f"Node {spec.label!r} runs only with the {' or '.join(map(repr, spec.node.launchers))} "
                f"launcher, not {launcher!r}: {spec.node.why}"
            )

    deadline = Deadline(timeout)
    guard = SignalGuard()
    try:
        if launcher == "threads":
            from launch.threads_launcher import run_threads

            outcome = run_threads(program, deadline=deadline, guard=guard, grace_period=grace_period)
        else:
            from launch.ray_launcher import run_ray

            outcome = run_ray(
                program,
                address=address,
                deadline=deadline,
                guard=guard,
                grace_period=grace_period,
                bind_address=bind_address,
                dashboard=dashboard,
                placement=placement,
            )
    finally:
        guard.restore()

    if outcome.error is not None:
        raise outcome.error
    guard.raise_if_signalled()
    if outcome.timed_out:
        raise LaunchTimeout(
            f"program {program.name!r} did not finish within {timeout} s "
            f"(unfinished: {', '.join(outcome.unfinished) or 'none'})"
        )


def _check_local_ray_options(launcher: str, address: str | None, bind_address: str | None, dashboard: bool) -> None:
    """Refuses ``bind_address``/``dashboard`` where they would not apply."""
    for name, given in (("bind_address", bind_address is not None), ("dashboard", dashboard)):
        if given and launcher != "ray":
            raise ValueError(
                f"{name} is only used by the 'ray' launcher (which starts Ray's servers), "
                f"not {launcher!r}, whose nodes share this process"
            )
        if given and address is not None:
            raise ValueError(
                f"{name} applies to a Ray instance that launch() starts; a cluster joined at "
                f"{address!r} keeps the addresses and dashboard it was started with"
            )
    if bind_address is not None:
        network.check_bind_address(bind_address)
