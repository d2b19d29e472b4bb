"""The in-process learning actor: one thread acts and, between steps, learns as often as replay allows.

Why it exists: in one process there is no learner thread. The actor and the
learner share the Python thread, so learning has to happen inside the acting
loop, and how often is not a schedule but the replay table's
samples-per-insert rate limiter: after each actor step the learner takes one
step for every batch the dataset has ready. That keeps the configured ratio
of learning to acting exactly, as a distributed run's separate learner would.

With local replay that is all: inserts never wait, and the learner catches up
after every step. Reverb's inserts block once acting runs too far ahead of the
ratio, and a blocked actor could never step the learner that would release
it, so ``InsertPressure`` watches the limiter and has the learner catch up
*before* inserts would block.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from acme import core


class InsertPressure:
    """Says when an actor's inserts are about to be blocked by a table's rate limiter.

    In one process the actor and learner share a thread. If the learner falls
    behind (its prefetched batches arrive late on a busy machine) the actor
    runs ahead until the samples-per-insert limiter blocks its inserts, and a
    blocked actor can never step the learner that would release it. The
    learner must therefore catch up *before* inserts block: ``too_high`` turns
    true as soon as acting is ahead of the limiter's centre (the configured
    ratio), and ``relieved`` once it is back there, where sampling is still
    allowed. The writer inserts items in small asynchronous bursts, so the
    limiter needs headroom of a few dozen inserts above its centre. Reading a
    table's info costs ~0.1 ms, so it is read every few steps when the headroom
    allows.
    """

    def __init__(self, read_infos: Callable[[], Mapping[str, Any]]):
        """``read_infos`` returns ``{table name: reverb TableInfo}`` (``table_infos`` builds one)."""
        self._read_infos = read_infos
        self._limited = []
        for name, info in read_infos().items():
            limiter = info.rate_limiter_info
            spi = float(limiter.samples_per_insert)
            if not (np.isfinite(limiter.max_diff) and np.isfinite(limiter.min_diff)) or spi <= 0:
                continue  # not a samples-per-insert limiter: inserts never wait for samples
            centre = 0.5 * (limiter.max_diff + limiter.min_diff)
            headroom_items = (limiter.max_diff - centre) / spi
            check_every = max(1, int(headroom_items // 8))
            self._limited.append((name, centre, check_every))
        self._calls = 0

    def _diffs(self) -> dict[str, float]:
        diffs = {}
        for name, info in self._read_infos().items():
            limiter = info.rate_limiter_info
            diffs[name] = (
                limiter.insert_stats.completed * float(limiter.samples_per_insert) - limiter.sample_stats.completed
            )
        return diffs

    def too_high(self) -> bool:
        self._calls += 1
        due = [(name, centre) for name, centre, every in self._limited if self._calls % every == 0]
        if not due:
            return False
        diffs = self._diffs()
        return any(diffs[name] > centre for name, centre in due)

    def relieved(self) -> bool:
        diffs = self._diffs()
        return all(diffs[name] <= centre for name, centre, _ in self._limited)


def table_infos(tables: list, replay_client: Any, restored: bool) -> Callable[[], Mapping[str, Any]]:
    """Reads the tables' infos: from the table objects (~10 us), or from the server (~0.2 ms) once a
    checkpoint was loaded, because reverb then serves tables rebuilt from the checkpoint."""
    if restored:
        return replay_client.server_info
    return lambda: {table.name: table.info for table in tables}


class LearnerStepper:
    """Steps the learner as often as replay allows now (the rule ``LearningActor`` follows); returns the steps
    taken."""

    def __init__(
        self,
        learner: core.Learner,
        iterator: core.PrefetchingIterator,
        pressure: InsertPressure | None = None,
        max_steps: int = 64,
    ):
        self._learner = learner
        self._iterator = iterator
        self._pressure = pressure
        self._max_steps = max_steps

    def __call__(self) -> int:
        steps = 0
        while self._iterator.ready() and steps < self._max_steps:
            self._learner.step()
            steps += 1
        if self._pressure is not None and self._pressure.too_high():
            while not self._pressure.relieved():
                self._learner.step()  # sampling is allowed here, so this returns
                steps += 1
        return steps


class LearningActor(core.Actor):
    """An actor whose ``update`` also steps the learner as often as replay allows.

    The replay table's samples-per-insert rate limiter decides: every batch the
    dataset has ready is one learner step, so learning keeps the configured
    ratio to acting. With local replay that is all (inserts never wait, and
    the learner catches up after every batched actor step). With reverb, when the
    learner has fallen so far behind that the next inserts would block (see
    ``InsertPressure``), it steps until it has caught up.
    """

    def __init__(self, actor: core.Actor, step_learner: LearnerStepper):
        self._actor = actor
        self._step_learner = step_learner

    @property
    def num_envs(self) -> int:
        return self._actor.num_envs

    def select_actions(self, observations):
        return self._actor.select_actions(observations)

    def observe_first(self, index: int, timestep) -> None:
        self._actor.observe_first(index, timestep)

    def observe(self, index: int, action, next_timestep) -> None:
        self._actor.observe(index, action, next_timestep)

    def update(self, wait: bool = False) -> None:
        if self._step_learner():
            self._actor.update(wait)
