"""Where a run's CPU time goes, by process: a sampler of every process's CPU seconds on this machine, and the
grouping of those processes into a distributed program's roles (learner, actors, the other nodes, Ray's own
daemons, the driver).

The sampler reads ``psutil`` when it is made (the start) and every ``interval`` seconds on a thread, and keeps
each process's latest total, so a process that exits keeps the CPU it had used at its last sample (under
``interval`` seconds of it may be missed). Loopback bytes are read the same way: on one machine they are what
a cluster would send over its network.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from typing import Any

import psutil

RAY_DAEMONS = ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py", "runtime_env", "ray_client")


@dataclasses.dataclass
class ProcessSample:
    name: str
    cmdline: str
    cpu_seconds: float


class CpuSampler:
    """Samples the CPU seconds of every process on the machine, and loopback traffic, until stopped."""

    def __init__(self, interval: float = 0.25):
        if interval <= 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval}.")
        self._interval = interval
        self._stop = threading.Event()
        self.processes: dict[int, ProcessSample] = {}
        self._loopback_start = _loopback_bytes()
        self.loopback_bytes = 0
        self._sample()
        self.start_cpu_seconds = {pid: sample.cpu_seconds for pid, sample in self.processes.items()}
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def _sample(self) -> None:
        for process in psutil.process_iter(["name", "cmdline", "cpu_times"]):
            info = process.info
            times = info.get("cpu_times")
            if times is None:
                continue
            previous = self.processes.get(process.pid)
            cmdline = " ".join(info.get("cmdline") or []) if previous is None else previous.cmdline
            self.processes[process.pid] = ProcessSample(info.get("name") or "", cmdline, times.user + times.system)
        self.loopback_bytes = _loopback_bytes() - self._loopback_start


def _loopback_bytes() -> int:
    counters = psutil.net_io_counters(pernic=True)
    return counters["lo"].bytes_sent if "lo" in counters else 0


def role_of(pid: int, sample: ProcessSample, node_pids: dict[str, int], driver_pid: int) -> str:
    """The role of a process: ``learner``, ``actors``, ``inference``, ``driver``, ``ray_daemons``,
    ``other_nodes`` (the other Ray workers: replay, counter, evaluator, idle workers) or ``other`` (anything else
    on the machine)."""
    for label, node_pid in node_pids.items():
        if pid == node_pid:
            if label in ("learner", "inference"):
                return label
            return "actors" if label.startswith("actor") else "other_nodes"
    if pid == driver_pid:
        return "driver"
    text = f"{sample.name} {sample.cmdline}"
    if any(daemon in text for daemon in RAY_DAEMONS):
        return "ray_daemons"
    if sample.cmdline.startswith("ray::") or "default_worker.py" in sample.cmdline:
        return "other_nodes"
    return "other"


def cpu_by_role(sampler: CpuSampler, node_pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds per role since the sampler was made (processes started since then count from 0)."""
    totals: dict[str, float] = {}
    for pid, sample in sampler.processes.items():
        role = role_of(pid, sample, node_pids, os.getpid())
        used = sample.cpu_seconds - sampler.start_cpu_seconds.get(pid, 0.0)
        totals[role] = totals.get(role, 0.0) + max(used, 0.0)
    return {role: round(seconds, 3) for role, seconds in sorted(totals.items())}


def report_node_pids(path: str, learner: Any, actors: list, inference: Any = None) -> None:
    """A program node's function: writes the process ids of the learner, the actors and the inference server
    (if any) to ``path`` as JSON."""
    pids = {"learner": learner.pid(), **{f"actor_{i}": actor.pid() for i, actor in enumerate(actors)}}
    if inference is not None:
        pids["inference"] = inference.pid()
    with open(path, "w") as f:
        json.dump(pids, f)
