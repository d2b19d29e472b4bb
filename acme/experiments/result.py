"""What a run reached, one type for every driver: the host loop, learning from a dataset, the on-device loop (its
seeds and swept values) and a distributed program (read back from its evaluator)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

from acme.experiments.evaluation import ACTOR_STEPS, LEARNER_STEPS, EvaluationResult

__all__ = ["ACTOR_STEPS", "LEARNER_STEPS", "EvaluationResult", "Progress", "RunResult", "SeedRun"]


@dataclasses.dataclass
class SeedRun:
    """What one agent of a run reached: its evaluations, its counts and its final policy.

    Attributes:
      seed: the agent's seed.
      evaluations: every evaluation, in order.
      actor_steps: environment steps taken (0 for a run from a dataset).
      learner_steps: learner steps taken.
      policy_params: the learner's final "policy" variables (host arrays), for a policy snapshot; None where the
        run could not hand them back.
      sweep_value: with an on-device sweep, the value of the swept field this agent trained with.
    """

    seed: int
    evaluations: list[EvaluationResult]
    actor_steps: int
    learner_steps: int
    policy_params: Any = None
    sweep_value: float | None = None

    @property
    def best(self) -> EvaluationResult | None:
        return max(self.evaluations, key=lambda e: e.mean_return) if self.evaluations else None

    def first_reaching(self, threshold: float) -> EvaluationResult | None:
        return next((e for e in self.evaluations if e.mean_return >= threshold), None)


@dataclasses.dataclass
class RunResult:
    """Every agent's run (one, or the on-device loop's seeds and swept values), and the run's wall-clock.

    Attributes:
      runs: one ``SeedRun`` per agent.
      wall_seconds: the whole run's wall-clock seconds.
      steps_key: what the run's budget and evaluations count: ``"actor_steps"`` online, ``"learner_steps"``
        from a dataset.
      compile_seconds: the on-device loop's compilation, part of ``wall_seconds`` (None elsewhere).
      steps_per_iteration: the on-device loop's environment steps per agent per iteration (None elsewhere).
      resumed_from: the on-device loop's iteration it resumed from (None for a fresh run or elsewhere).

    A run of one agent reads like that agent: ``result.evaluations``, ``result.best`` and the rest are its.
    """

    runs: list[SeedRun]
    wall_seconds: float
    steps_key: str = ACTOR_STEPS
    compile_seconds: float | None = None
    steps_per_iteration: int | None = None
    resumed_from: int | None = None

    def __post_init__(self):
        if self.steps_key not in (ACTOR_STEPS, LEARNER_STEPS):
            raise ValueError(f"steps_key must be {ACTOR_STEPS!r} or {LEARNER_STEPS!r}, got {self.steps_key!r}.")

    @property
    def only(self) -> SeedRun:
        """The run's one agent; a clear error for a run of several (read ``runs``)."""
        if len(self.runs) != 1:
            raise ValueError(f"This run trained {len(self.runs)} agents; read result.runs for each one's.")
        return self.runs[0]

    @property
    def evaluations(self) -> list[EvaluationResult]:
        return self.only.evaluations

    @property
    def actor_steps(self) -> int:
        return self.only.actor_steps

    @property
    def learner_steps(self) -> int:
        return self.only.learner_steps

    @property
    def policy_params(self) -> Any:
        return self.only.policy_params

    @property
    def best(self) -> EvaluationResult | None:
        return self.only.best

    def first_reaching(self, threshold: float) -> EvaluationResult | None:
        return self.only.first_reaching(threshold)

    def position(self, evaluation: EvaluationResult) -> int:
        """Where ``evaluation`` happened, in the run's own count (``steps_key``)."""
        return int(getattr(evaluation, self.steps_key))


@dataclasses.dataclass
class Progress:
    """What a host driver's checkpoints keep of its run besides the learner: its evaluations so far and its
    wall-clock, which goes on from a stopped attempt's (``resumed``, ``loop_state``)."""

    evaluations: list[EvaluationResult]
    start: float  # the perf_counter() reading at which the run would have started, had it never stopped

    @classmethod
    def resumed(cls, loop: Mapping[str, Any], steps_key: str = ACTOR_STEPS) -> "Progress":
        """The progress a checkpoint's loop state holds (a new run's where it is empty); ``steps_key``: what the
        run counts."""
        evaluations = [_saved_evaluation(e, steps_key) for e in loop.get("evaluations", [])]
        return cls(evaluations, time.perf_counter() - float(loop.get("wall_seconds", 0.0)))

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def loop_state(self, next_eval: int, resumes: int, **more: Any) -> dict:
        """The loop state a checkpoint saves: this progress, the next evaluation's count, the resumes so far."""
        evaluations = [dataclasses.astuple(e) for e in self.evaluations]
        return {
            **more,
            "next_eval": next_eval,
            "resumes": resumes,
            "wall_seconds": self.elapsed(),
            "evaluations": evaluations,
        }


def _saved_evaluation(saved: Any, steps_key: str) -> EvaluationResult:
    """An evaluation from a checkpoint's loop state. Those written before evaluations kept their learner steps
    hold four fields; a run from a dataset's then begin with its learner steps (it takes no actor step)."""
    if len(saved) == 4 and steps_key == LEARNER_STEPS:
        return EvaluationResult(0, *saved[1:], learner_steps=int(saved[0]))
    return EvaluationResult(*saved)
