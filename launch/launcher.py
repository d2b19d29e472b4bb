"""The ``launch()`` entry point: picks a backend, handles signals and outcome."""

from __future__ import annotations

from typing import Any

from launch._outcome import Deadline
from launch._signals import SignalGuard
from launch.errors import LaunchTimeout
from launch.options import LaunchOptions
from launch.placement import resolve_placement
from launch.program import Program


def launch(program: Program, launcher: str | LaunchOptions = "threads", **options: Any) -> dict[str, Any]:
    """Runs ``program`` and blocks until it ends; returns what its nodes' functions and services' ``run()``
    returned, by node label (those that returned None, or had not returned when the program was stopped, are
    left out; a value from a Ray actor is pickled on its way back).

    The program ends when every terminal node has finished (or, with no
    terminal nodes, when every function and every service ``run()`` has
    returned). Then all nodes are stopped: the stop event is set (see
    ``launch.stop_requested``) and services' ``stop()`` are called in reverse
    construction order; node threads/actors get ``grace_period`` seconds to
    return before they are abandoned (threads) or killed (Ray actors).

    ``launcher`` is ``"threads"`` or ``"ray"`` with the other ``LaunchOptions`` fields as keywords
    (``address``, ``bind_address``, ``dashboard``, ``placement``, ``timeout``, ``grace_period``: see there), or
    a ``LaunchOptions`` itself.

    Raises:
      ValueError: unknown launcher, or bad options.
      GraphError: invalid program graph (checked before anything starts).
      NodeError: a node raised (constructor, run, function, stop) or its
        process died without restarts left; carries the label and traceback.
      ClusterConnectionError: ``address`` could not be reached or joined; ``RayStartError`` (one) if a local Ray
        instance did not start (in time: ``LAUNCH_RAY_START_TIMEOUT``, see ``launch.ray_launcher``).
      LaunchTimeout: ``timeout`` expired.
      KeyboardInterrupt / SystemExit: SIGINT / SIGTERM received (after a
        clean shutdown; the previous signal handlers are restored).
    """
    if isinstance(launcher, LaunchOptions):
        if options:
            raise TypeError(
                f"launch() takes a LaunchOptions or its fields as keywords, not both: got {sorted(options)}"
            )
        options = launcher
    else:
        options = LaunchOptions(launcher, **options)
    if not isinstance(program, Program):
        raise TypeError(f"launch() expects a launch.Program, got {program!r}")
    program.construction_order()  # Validate the graph before anything starts.
    resolve_placement(program, options.placement)  # Validate the map before anything starts.
    for spec in program.nodes:
        if spec.node.launchers is not None and options.launcher not in spec.node.launchers:
            raise ValueError(
                f"Node {spec.label!r} runs only with the {' or '.join(map(repr, spec.node.launchers))} "
                f"launcher, not {options.launcher!r}: {spec.node.why}"
            )

    deadline = Deadline(options.timeout)
    guard = SignalGuard()
    try:
        if options.launcher == "threads":
            from launch.threads_launcher import run_threads

            outcome = run_threads(program, deadline=deadline, guard=guard, grace_period=options.grace_period)
        else:
            from launch.ray_launcher import run_ray

            outcome = run_ray(
                program,
                address=options.address,
                deadline=deadline,
                guard=guard,
                grace_period=options.grace_period,
                bind_address=options.bind_address,
                dashboard=options.dashboard,
                placement=options.placement,
            )
    finally:
        guard.restore()

    if outcome.error is not None:
        raise outcome.error
    guard.raise_if_signalled()
    if outcome.timed_out:
        raise LaunchTimeout(
            f"program {program.name!r} did not finish within {options.timeout} s "
            f"(unfinished: {', '.join(outcome.unfinished) or 'none'})"
        )
    return dict(outcome.results)
