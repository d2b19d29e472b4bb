"""Pieces every benchmark uses: random actions, timed environment stepping, the machine, the JSON report."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

import numpy as np


def random_actions(action_spec, count: int, low=None, high=None, seed: int = 0) -> list:
    """``count`` uniform random actions for ``action_spec``, drawn up front (kept out of any timing).

    Discrete specs draw from ``[0, num_values)``; bounded ones from ``[low, high]``, by default the
    spec's own bounds.
    """
    rng = np.random.default_rng(seed)
    if np.issubdtype(action_spec.dtype, np.integer):
        return list(rng.integers(0, action_spec.num_values, size=count).astype(action_spec.dtype))
    low = np.broadcast_to(action_spec.minimum if low is None else low, action_spec.shape)
    high = np.broadcast_to(action_spec.maximum if high is None else high, action_spec.shape)
    return list(rng.uniform(low, high, size=(count, *action_spec.shape)).astype(action_spec.dtype))


def steps_per_second(environment, actions: list) -> float:
    """Steps ``environment`` through ``actions`` (resetting at episode ends); returns steps per second."""
    timestep = environment.reset()
    start = time.perf_counter()
    for action in actions:
        if timestep.last():
            timestep = environment.reset()
        timestep = environment.step(action)
    return len(actions) / (time.perf_counter() - start)


def machine(**extra) -> dict:
    """What the figures were measured on: cores, Python, and the versions of the stack's main packages."""
    from importlib import metadata

    versions = {}
    for package in ("jax", "jaxlib", "numpy", "dm-haiku", "optax", "dm-reverb"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "packages": versions, **extra}


def write_report(path: str, report: dict, summary: dict | None = None) -> None:
    """Writes ``report`` as JSON atomically, then prints ``summary`` (or where it went)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
    os.replace(path + ".tmp", path)
    print(json.dumps(summary, indent=2) if summary is not None else f"Written to {path}", flush=True)


def pinned_placement(cores: int) -> dict:
    """A placement (as JSON fields) that pins the learner to core 0 and the actors to the other cores, so the
    learner's XLA threads and the actors do not take each other's time; the other nodes are left unpinned."""
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 2:
        raise ValueError(f"Pinning the learner and the actors apart needs at least 2 cores, got {cores!r}.")
    return {"learner": {"cores": [0]}, "actor": {"cores": list(range(1, cores))}}


def run_worker(script: str, job, core: int | None):
    """Runs ``script --worker <job as JSON>`` in a fresh process of this interpreter and returns the JSON value its
    last line of output holds. With a ``core``, XLA and BLAS run single-threaded there (the worker pins itself
    with ``pin_worker``). Raises ``RuntimeError`` with the end of the worker's errors if it fails."""
    from launch.config import thread_environment

    env = dict(os.environ, **(thread_environment(1) if core is not None else {}))
    command = [sys.executable, script, "--worker", json.dumps(job)]
    out = subprocess.run(command, env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{os.path.basename(script)} worker {job} failed:\n{out.stderr.strip()[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def pin_worker(core: int | None) -> None:
    """Pins this process (a benchmark's worker) to ``core``; leaves it where it is for None."""
    if core is not None:
        os.sched_setaffinity(0, {core})
