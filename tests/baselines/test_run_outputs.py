"""One result type and one writer of a run's folder, for every launcher, online or from a dataset."""

from __future__ import annotations

import json

import pytest

from acme.experiments.evaluation import EvaluationResult
from acme.experiments.result import LEARNER_STEPS, Progress, RunResult, SeedRun
from baselines import report, run_outputs


def _run(seed: int, *returns: float, learner_only: bool = False) -> SeedRun:
    evaluations = [
        EvaluationResult(0 if learner_only else 100 * (i + 1), r, 1.0, float(i), learner_steps=10 * (i + 1))
        for i, r in enumerate(returns)
    ]
    return SeedRun(seed, evaluations, 0 if learner_only else 100 * len(returns), 10 * len(returns))


def test_a_run_of_one_agent_reads_as_that_agent_and_one_of_several_refuses_to_guess():
    one = RunResult([_run(3, 1.0, 5.0, 2.0)], 9.0)
    assert one.best.mean_return == 5.0 and one.first_reaching(2.0).actor_steps == 200 and one.learner_steps == 30
    several = RunResult([_run(0, 1.0), _run(1, 2.0)], 9.0)
    with pytest.raises(ValueError, match="trained 2 agents; read result.runs"):
        several.evaluations
    with pytest.raises(ValueError, match="steps_key must be"):
        RunResult([_run(0, 1.0)], 1.0, steps_key="episodes")


def test_a_run_from_a_dataset_is_placed_at_its_learner_steps_and_takes_no_actor_step(tmp_path, capsys):
    result = RunResult([_run(0, 1.0, 4.0, learner_only=True)], 3.0, steps_key="learner_steps")
    description = run_outputs.RunDescription("bc", "gymnasium:Pendulum-v1", None, dataset=str(tmp_path / "data"))
    content = run_outputs.result_json(result, description)
    assert content["steps_key"] == "learner_steps" and content["actor_steps"] == 0 and content["learner_steps"] == 20
    assert [e["learner_steps"] for e in content["evaluations"]] == [10, 20]
    assert content["dataset"] == str(tmp_path / "data") and "agents" not in content
    lines = run_outputs.closing_lines(result, description, "DIR")
    assert lines == ["Best evaluation return 4.0 at learner step 20", "Finished 20 learner steps in 3 s (logs in DIR)."]
    (tmp_path / "result.json").write_text(json.dumps({**content, "seed": 0}))
    seed_run = report.SeedRun.from_result(json.loads((tmp_path / "result.json").read_text()))
    assert seed_run.steps == (10, 20)  # a user's report plots it against learner steps


def test_several_agents_each_get_their_line_and_are_all_kept():
    result = RunResult([_run(0, 1.0), _run(1, 7.0, 3.0)], 12.4, compile_seconds=4.25)
    description = run_outputs.RunDescription("ppo", "jax:CartPole-v1", None, launcher="anakin")
    assert run_outputs.closing_lines(result, description, "DIR") == [
        "Best evaluation return 1.0 at actor step 100 (seed 0)",
        "Best evaluation return 7.0 at actor step 100 (seed 1)",
        "Finished 200 actor steps each in 12 s, 4.2 s of it compiling (logs in DIR).",
    ]
    content = run_outputs.result_json(result, description)
    assert [a["seed"] for a in content["agents"]] == [0, 1] and content["compile_seconds"] == 4.25
    unevaluated = RunResult([SeedRun(0, [], 500, 5)], 2.0)
    assert run_outputs.closing_lines(unevaluated, description, "D")[-1] == (
        "Finished 500 actor steps in 2 s with no evaluation (logs in D)."
    )


def test_a_checkpoint_from_before_learner_steps_were_kept_resumes_its_curve():
    saved = {"evaluations": [[3000, -150.0, 20.0, 41.5], [0, -120.0, 10.0, 50.0, 4000]], "wall_seconds": 50.0}
    old, new = Progress.resumed(saved, LEARNER_STEPS).evaluations  # from a dataset, the first field was learner steps
    assert (old.actor_steps, old.learner_steps, old.mean_return, old.wall_seconds) == (0, 3000, -150.0, 41.5)
    assert (new.actor_steps, new.learner_steps) == (0, 4000)
    (online,) = Progress.resumed({"evaluations": [[3000, 20.0, 1.0, 4.0]]}).evaluations  # online: actor steps
    assert (online.actor_steps, online.learner_steps) == (3000, None)
    assert Progress.resumed(saved, LEARNER_STEPS).elapsed() >= 50.0  # the clock goes on from the saved run's
