"""Node functions for the distributed-experiment tests (importable, so Ray workers can load them)."""

from __future__ import annotations

import csv
import os
import signal
import time

import launch


def kill_actor_once(actor, counter, after_steps: int, record_path: str, actor_log: str | None = None) -> None:
    """SIGKILLs ``actor``'s process once the actors have taken ``after_steps`` steps and, given ``actor_log`` (its
    CSV log), once it has logged an episode of its own (the other actors alone can reach ``after_steps`` while it
    still compiles)."""

    def progress() -> int:
        if actor_log is not None and not _logged_an_episode(actor_log):
            return 0
        return counter.get_counts().get("actor_steps", 0)

    _kill_when(actor, progress, after_steps, record_path)


def _logged_an_episode(path: str) -> bool:
    try:
        with open(path) as f:
            return any(row.get("episode_length") for row in csv.DictReader(f))
    except FileNotFoundError:
        return False


def _kill_when(node, progress, threshold: int, record_path: str) -> None:
    """Once ``progress()`` reaches ``threshold``, writes "<pid> <progress>" to ``record_path`` and SIGKILLs
    ``node``'s process (``node.pid()``); returns early if the program stops first."""
    while progress() < threshold:
        if launch.stop_requested():
            return
        time.sleep(0.1)
    pid = node.pid()
    with open(record_path, "w") as f:
        f.write(f"{pid} {progress()}")
    os.kill(pid, signal.SIGKILL)


class CrashingLearner:
    """Wraps a learner and raises after ``crash_after`` steps (a stand-in for a learner bug)."""

    def __init__(self, learner, crash_after: int):
        self._learner = learner
        self._crash_after = crash_after
        self._steps = 0

    def step(self) -> None:
        self._steps += 1
        if self._steps > self._crash_after:
            raise RuntimeError(f"learner exploded at step {self._steps}")
        self._learner.step()

    def get_variables(self, names):
        return self._learner.get_variables(names)


def make_crashing_builder(config, crash_after: int):
    """A DQN builder whose learner raises after ``crash_after`` steps."""
    from agents.dqn import DQNBuilder

    class CrashingDQNBuilder(DQNBuilder):
        def make_learner(self, *args, **kwargs):
            return CrashingLearner(super().make_learner(*args, **kwargs), crash_after)

    return CrashingDQNBuilder(config)


def kill_learner_after_checkpoint(learner, checkpoint_dir: str, min_step: int, record_path: str) -> None:
    """SIGKILLs ``learner``'s process once a checkpoint of at least ``min_step`` learner steps exists."""

    def newest() -> int:
        if not os.path.isdir(checkpoint_dir):
            return -1
        steps = [int(n.split("-")[1]) for n in os.listdir(checkpoint_dir) if n.startswith("ckpt-")]
        return max(steps, default=-1)

    _kill_when(learner, newest, min_step, record_path)


def record_held_replay(learner, counter, num_actors: int, record_path: str) -> None:
    """Once every actor has finished, writes the learner's ``held_replay_info()`` (its own tables) as JSON."""
    import json

    while counter.get_counts().get("actor_node_finishes", 0) < num_actors:
        if launch.stop_requested():
            return
        time.sleep(0.05)
    time.sleep(0.5)  # the last items cross the queue
    with open(record_path, "w") as f:
        json.dump(learner.held_replay_info(), f)
