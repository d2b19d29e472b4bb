"""Runs every node as a thread of the launching process."""

from __future__ import annotations

import logging
import queue
import threading
import traceback

from launch import context
from launch._outcome import Deadline, Outcome, run_recorded
from launch._signals import SignalGuard
from launch.errors import NodeError
from launch.handles import map_handles
from launch.nodes import NodeInstance
from launch.program import NodeSpec, Program

logger = logging.getLogger("launch")

_POLL_S = 0.1


def _thread_body(
    label: str, instance: NodeInstance, done: queue.Queue, stop_event: threading.Event, outcome: Outcome
) -> None:
    context._bind_thread(stop_event)
    try:
        value = instance.main()
    except BaseException:
        done.put((label, traceback.format_exc()))
    else:
        outcome.returned(label, value)
        done.put((label, None))


def run_threads(program: Program, *, deadline: Deadline, guard: SignalGuard, grace_period: float) -> Outcome:
    """Builds services in dependency order, runs the mains in threads, stops all.

    A signal raises straight out of a blocking service constructor (like a
    plain KeyboardInterrupt would); while waiting for the nodes it is polled
    instead, since raising inside ``queue``/lock internals can corrupt them.
    """
    order = program.construction_order()
    outcome = Outcome()
    stop_event = threading.Event()
    built: list[tuple[NodeSpec, NodeInstance]] = []
    threads: dict[str, threading.Thread] = {}
    context._activate(stop_event)
    try:
        run_recorded(
            outcome,
            guard,
            lambda: _run(order, program, deadline, guard, built, threads, stop_event, outcome),
            lambda: _shutdown(built, threads, stop_event, grace_period, outcome),
        )
    finally:
        context._deactivate(stop_event)
    if guard.signum is not None and outcome.signum is None:
        outcome.signum = guard.signum
    return outcome


def _run(
    order: list[NodeSpec],
    program: Program,
    deadline: Deadline,
    guard: SignalGuard,
    built: list[tuple[NodeSpec, NodeInstance]],
    threads: dict[str, threading.Thread],
    stop_event: threading.Event,
    outcome: Outcome,
) -> set[str]:
    """Returns the labels still unfinished when the deadline expired (else empty)."""
    values: dict[str, object] = {}
    for spec in order:
        args, kwargs = map_handles(spec.node.arguments, lambda h: values[h.label])
        try:
            instance = spec.node.instantiate(args, kwargs, host="localhost")
        except Exception:
            raise NodeError(spec.label, traceback.format_exc()) from None
        built.append((spec, instance))
        if spec.node.handle_kind == "service":
            values[spec.label] = instance.target
        elif spec.node.handle_kind == "address":
            values[spec.label] = instance.address

    guard.set_raise_in_handler(False)  # From now on: poll guard.check().
    guard.check()
    remaining = program.completion_labels({spec.label: instance.has_main for spec, instance in built})
    done: queue.Queue = queue.Queue()
    for spec, instance in built:
        if instance.has_main:
            thread = threading.Thread(
                target=_thread_body,
                name=f"launch:{spec.label}",
                args=(spec.label, instance, done, stop_event, outcome),
                daemon=True,
            )
            threads[spec.label] = thread
            thread.start()

    while remaining:
        guard.check()
        if deadline.expired():
            return remaining
        try:
            label, error = done.get(timeout=deadline.remaining(_POLL_S))
        except queue.Empty:
            continue
        if error is not None:
            raise NodeError(label, error)
        remaining.discard(label)
    return set()


def _shutdown(
    built: list[tuple[NodeSpec, NodeInstance]],
    threads: dict[str, threading.Thread],
    stop_event: threading.Event,
    grace_period: float,
    outcome: Outcome,
) -> None:
    stop_event.set()
    for spec, instance in reversed(built):
        try:
            instance.stop()
        except Exception:
            details = "exception in stop():\n" + traceback.format_exc()
            logger.error("node %r: %s", spec.label, details)
            outcome.fail(NodeError(spec.label, details))
    end = Deadline(grace_period)
    for label, thread in threads.items():
        thread.join(end.remaining())
        if thread.is_alive():
            logger.warning("node %r did not stop within %.1f s; abandoning its daemon thread", label, grace_period)
