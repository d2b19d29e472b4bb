"""The schedule of a run: its step budget, when it evaluates, when a checkpoint is due, stopping at the next check
on Ctrl-C or SIGTERM, and its progress bar.

Every driver (the host loop, learning from a dataset, the on-device loop) only advances, evaluates and saves;
``Schedule.run`` is the one loop around them::

    Schedule(budget, eval_every, ...).run(
        advance=...,  # acting, updates or device iterations for next_stretch() steps: the steps done in all
        evaluate=...,  # one evaluation: its mean return
        learner_steps=...,  # the count the checkpoint interval is measured in
        save=...,  # one checkpoint
    )

Steps are counted in the driver's unit (actor steps online, learner steps from a dataset). An evaluation is due
once the count passes the next multiple of ``eval_every`` and at the end of the budget; the next one is then the
first multiple past the count, so a stretch that overshoots does not bunch evaluations together.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from acme.agents.config_checks import is_integer
from acme.experiments.checkpointing import CheckpointClock, CheckpointingConfig
from acme.experiments.interrupt import StopAtNextCheck


class Schedule:
    """One run's schedule (see the module docstring); a context manager that holds the signal handlers and the
    progress bar while the run trains.

    Args:
      budget: the steps to take (``>= 1``).
      eval_every: steps between evaluations; 0 turns evaluation off.
      done: steps already taken (a resumed run's).
      next_eval: the count at which the next evaluation is due (a resumed run's; default: the first multiple of
        ``eval_every`` past ``done``).
      checkpointing: where and how often checkpoints go; None saves nothing (Ctrl-C then stops at once).
      clock: when a checkpoint is due (default: a fresh ``CheckpointClock`` of ``checkpointing``).
      stop_at_return: end the run at the first evaluation whose mean return reaches this.
      progress: show a progress bar (tqdm) of ``unit``s, described by ``description``.
      step_name: what a step is, in messages ("actor step", "learner step").
    """

    def __init__(
        self,
        budget: int,
        eval_every: int,
        *,
        done: int = 0,
        next_eval: int | None = None,
        checkpointing: CheckpointingConfig | None = None,
        clock: CheckpointClock | None = None,
        stop_at_return: float | None = None,
        progress: bool = False,
        unit: str = "step",
        description: str = "train",
        step_name: str = "actor step",
    ):
        if not is_integer(budget) or budget < 1:
            raise ValueError(f"budget must be an integer >= 1 (steps to take), got {budget!r}.")
        if not is_integer(eval_every) or eval_every < 0:
            raise ValueError(f"eval_every must be an integer >= 0 (0: no evaluation), got {eval_every!r}.")
        self.budget = budget
        self.eval_every = eval_every
        self.done = int(done)
        if next_eval is None:  # the first multiple of eval_every past what is done
            next_eval = (self.done // eval_every + 1) * eval_every if eval_every else 0
        self.next_eval = int(next_eval)
        self._checkpointing = checkpointing
        self._clock = clock if clock is not None or checkpointing is None else CheckpointClock(checkpointing)
        self._stop_at_return = stop_at_return
        self._reached_return = False
        self._progress = progress
        self._unit = unit
        self.description = description
        self._step_name = step_name
        self._bar: Any = None
        self._interrupt: StopAtNextCheck | None = None

    def __enter__(self) -> "Schedule":
        if self._progress:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.budget,
                initial=min(self.done, self.budget),
                unit=self._unit,
                dynamic_ncols=True,
                mininterval=1.0,
                desc=self.description,
            )
        # With checkpoints, the first Ctrl-C or SIGTERM saves one at the next check and then stops the run.
        self._interrupt = StopAtNextCheck(enabled=self._checkpointing is not None, announce=self.say)
        try:
            self._interrupt.__enter__()
        except BaseException:
            self._close_bar()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._interrupt is not None:
                self._interrupt.__exit__(*exc_info)
        finally:
            self._close_bar()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def say(self, message: str) -> None:
        """Prints ``message`` without breaking the progress bar."""
        if self._bar is not None:
            self._bar.write(message)
        else:
            print(message, flush=True)

    @property
    def finished(self) -> bool:
        """The budget is spent, or an evaluation reached ``stop_at_return``."""
        return self.done >= self.budget or self._reached_return

    def next_stretch(self, most: int | None = None) -> int:
        """Steps to take before the next check: up to the budget's end, the next evaluation and ``most``."""
        steps = self.budget - self.done
        if self.eval_every and self.next_eval > self.done:
            steps = min(steps, self.next_eval - self.done)
        if most is not None:
            steps = min(steps, most)
        return max(steps, 1)

    def stretch_in(self, steps_per_unit: int) -> int:
        """``next_stretch`` in whole units of ``steps_per_unit`` steps (the on-device loop's iterations),
        rounded up."""
        return max(1, math.ceil(self.next_stretch() / steps_per_unit))

    def reached(self, done: int, episode_return: float | None = None) -> None:
        """The driver has now taken ``done`` steps in all (the last episode to end returned ``episode_return``)."""
        if self._bar is not None:
            self._bar.update(max(0, min(int(done), self.budget) - self._bar.n))
            if episode_return is not None:
                self._bar.set_postfix(ret=f"{episode_return:.1f}", refresh=False)
        self.done = int(done)

    @property
    def evaluation_due(self) -> bool:
        return bool(self.eval_every) and (self.done >= self.next_eval or self.done >= self.budget)

    def evaluated(self, mean_return: float) -> None:
        """An evaluation at ``done`` returned ``mean_return`` on average: the next is due at the first multiple
        of ``eval_every`` past ``done``."""
        while self.next_eval <= self.done:
            self.next_eval += self.eval_every
        if self._bar is not None:
            self._bar.set_description(f"{self.description} eval={mean_return:.1f}")
        if self._stop_at_return is not None and mean_return >= self._stop_at_return:
            self._reached_return = True

    def checkpoint_due(self, learner_steps: int) -> bool:
        """Save now: at the end, when a signal asked to stop, or when the checkpoint interval has passed.
        Episodes in progress restart on resume, so what an adder has not yet written is not saved."""
        if self._checkpointing is None:
            return False
        requested = self._interrupt is not None and self._interrupt.requested
        return self.finished or requested or self._clock.due(learner_steps)

    def checkpoint_saved(self, learner_steps: int) -> None:
        self._clock.saved(learner_steps)

    def stop_if_requested(self) -> None:
        """After a check's checkpoint: ends the run if a signal asked it to stop (KeyboardInterrupt for Ctrl-C,
        SystemExit(143) for SIGTERM), unless the run is over anyway."""
        if self._interrupt is not None and self._interrupt.requested and not self.finished:
            self._interrupt.stop(f"at {self._step_name} {self.done}, after a checkpoint")

    def run(
        self,
        advance: Callable[[], int | tuple[int, float | None]],
        evaluate: Callable[[], float],
        learner_steps: Callable[[], int],
        save: Callable[[], None],
    ) -> None:
        """Drives a run to its end (see the module docstring): ``advance()`` takes ``next_stretch()`` steps or so
        and returns the steps done in all (with the last finished episode's return, for the progress bar)."""
        with self:
            while not self.finished:
                done = advance()
                if isinstance(done, tuple):
                    self.reached(*done)
                else:
                    self.reached(done)
                if self.evaluation_due:
                    self.evaluated(evaluate())
                if self._checkpointing is not None:  # learner_steps() is asked only where checkpoints are due
                    steps = learner_steps()
                    if self.checkpoint_due(steps):
                        save()
                        self.checkpoint_saved(steps)
                self.stop_if_requested()
