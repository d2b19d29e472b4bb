"""Node functions for the distributed-experiment tests (importable, so Ray workers can load them)."""

from __future__ import annotations

import os
import signal
import time

import launch


def kill_actor_once(actor, counter, after_steps: int, record_path: str) -> None:
    """SIGKILLs ``actor``'s process once the actors have taken ``after_steps`` steps."""
    while counter.get_counts().get("actor_steps", 0) < after_steps:
        if launch.stop_requested():
            return
        time.sleep(0.1)
    pid = actor.pid()
    with open(record_path, "w") as f:
        f.write(f"{pid} {counter.get_counts().get('actor_steps', 0)}")
    os.kill(pid, signal.SIGKILL)
