"""Ends a local Ray instance's processes when the process that started it dies without shutting Ray down.

Ray ties its GCS and raylet to the process that starts them (the kernel kills them when it dies), but not the
raylet's agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``): once the raylet is gone they try for 60 s to
tell the dead GCS so before they exit (Ray 2.60), and a process killed with SIGKILL leaves them behind that long.

``launch.ray_launcher`` runs this file as a script beside a local Ray instance, in its own session (a terminal's
Ctrl-C is for the process that started Ray), reading a pipe from that process: one JSON line, ``[pid, create_time]``
of each process of the instance, then ``close`` once Ray is shut down. End of input without ``close`` (the process
died: SIGKILL, a crash) sends SIGKILL to each of those processes still running; an id that now names another
process (ids are reused) is left alone. Only the standard library and psutil are imported.
"""

from __future__ import annotations

import json
import sys

CLOSE = "close"
_SAME_START_S = 0.01  # two readings of one process's start time agree closer than this (clock ticks of 10 ms)


def end_processes(processes: list[tuple[int, float]]) -> None:
    """SIGKILL to each ``(pid, create_time)`` still running as that process."""
    import psutil

    for pid, started in processes:
        try:
            process = psutil.Process(pid)
            if abs(process.create_time() - started) < _SAME_START_S:
                process.kill()
        except psutil.Error:
            continue  # it has ended (or is not ours to signal)


def main() -> None:
    processes = [(int(pid), float(started)) for pid, started in json.loads(sys.stdin.readline() or "[]")]
    if sys.stdin.readline().strip() != CLOSE:
        end_processes(processes)


if __name__ == "__main__":
    main()
