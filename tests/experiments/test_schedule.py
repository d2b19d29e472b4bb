"""The one schedule every driver follows: stretches, evaluations, checkpoints and stopping on a signal."""

from __future__ import annotations

import os
import signal

import pytest

from acme.experiments.checkpointing import CheckpointingConfig
from acme.experiments.schedule import Schedule


def _drive(schedule: Schedule, step_size: int = 1) -> list[int]:
    """Advances in whole multiples of ``step_size`` (as the device loop's iterations do); returns where it
    evaluated."""
    evaluated = []
    with schedule:
        while not schedule.finished:
            units = -(-schedule.next_stretch() // step_size)
            schedule.reached(schedule.done + units * step_size)
            if schedule.evaluation_due:
                evaluated.append(schedule.done)
                schedule.evaluated(0.0)
    return evaluated


def test_stretches_end_at_each_evaluation_and_at_the_budget():
    schedule = Schedule(1000, 300)
    assert _drive(schedule) == [300, 600, 900, 1000] and schedule.done == 1000


def test_an_overshooting_stretch_evaluates_once_and_the_next_is_the_following_multiple():
    assert _drive(Schedule(1000, 300), step_size=256) == [512, 768, 1024]  # 600 and 900 each passed once


def test_no_evaluation_means_one_stretch_to_the_end():
    schedule = Schedule(1000, 0)
    assert schedule.next_stretch() == 1000 and schedule.next_stretch(most=64) == 64
    assert _drive(schedule) == []


def test_a_resumed_schedule_evaluates_at_the_next_multiple_past_what_was_done():
    schedule = Schedule(1000, 300, done=650)
    assert schedule.next_eval == 900 and schedule.next_stretch() == 250


def test_reaching_the_return_to_stop_at_ends_the_run():
    schedule = Schedule(1000, 100, stop_at_return=10.0)
    with schedule:
        schedule.reached(100)
        schedule.evaluated(9.0)
        assert not schedule.finished
        schedule.reached(200)
        schedule.evaluated(10.0)
        assert schedule.finished


def test_checkpoints_are_due_every_interval_and_at_the_end(tmp_path):
    every = CheckpointingConfig(str(tmp_path), every_minutes=None, every_learner_steps=100)
    schedule = Schedule(1000, 0, checkpointing=every)
    with schedule:
        assert not schedule.checkpoint_due(99) and schedule.checkpoint_due(100)
        schedule.checkpoint_saved(100)
        assert not schedule.checkpoint_due(150) and schedule.checkpoint_due(200)
        schedule.reached(1000)
        assert schedule.checkpoint_due(201)  # the end
    assert not Schedule(1000, 0).checkpoint_due(10**9)  # nothing to save without a directory


def test_ctrl_c_asks_for_a_checkpoint_then_stops_with_keyboard_interrupt(tmp_path, capsys):
    schedule = Schedule(
        1000, 0, checkpointing=CheckpointingConfig(str(tmp_path), every_minutes=60.0), step_name="learner step"
    )
    with schedule:
        schedule.reached(10)
        schedule.stop_if_requested()  # nothing asked yet
        os.kill(os.getpid(), signal.SIGINT)
        assert schedule.checkpoint_due(0)
        with pytest.raises(KeyboardInterrupt, match="at learner step 10, after a checkpoint"):
            schedule.stop_if_requested()
    assert "Ctrl-C: saving a checkpoint at the next check" in capsys.readouterr().out


@pytest.mark.parametrize("budget", [0, -1, 1.5, True])
def test_a_budget_that_is_not_a_positive_integer_is_refused(budget):
    with pytest.raises(ValueError, match="budget must be an integer >= 1"):
        Schedule(budget, 0)
