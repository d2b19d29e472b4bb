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


def record_held_replay(learner, counter, num_actors: int, record_path: str, queues: str | None = None) -> None:
    """Once every actor has finished and every item it wrote is in the learner's tables, writes the learner's
    ``held_replay_info()`` (its own tables) as JSON.

    Over the direct feed an actor finishes only once the learner acknowledged its last item. Through reverb's
    transfer queues (``queues``: the replay node's address) the learner's feed may still be moving items: it has
    moved them all once it has taken as many as the queues were given.
    """
    import json

    while counter.get_counts().get("actor_node_finishes", 0) < num_actors:
        if launch.stop_requested():
            return
        time.sleep(0.05)
    if queues is not None:
        import reverb

        client = reverb.Client(queues)

        def given() -> int:
            return sum(info.rate_limiter_info.insert_stats.completed for info in client.server_info().values())

        deadline = time.monotonic() + 60  # a guard against a hang, not a speed check
        while learner.held_replay_info()["items_received"] < given():
            if launch.stop_requested():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the learner's feed moved {learner.held_replay_info()} of {given()} items")
            time.sleep(0.05)
    with open(record_path, "w") as f:
        json.dump(learner.held_replay_info(), f)


def kill_actor_then_learner(
    actor,
    counter,
    after_steps: int,
    actor_record: str,
    actor_log: str,
    learner,
    checkpoint_dir: str,
    min_step: int,
    learner_record: str,
) -> None:
    """``kill_actor_once``, then at once ``kill_learner_after_checkpoint``: one run's program restarts both
    (tests/experiments/test_distributed.py)."""
    kill_actor_once(actor, counter, after_steps, actor_record, actor_log)
    if not launch.stop_requested():
        kill_learner_after_checkpoint(learner, checkpoint_dir, min_step, learner_record)
