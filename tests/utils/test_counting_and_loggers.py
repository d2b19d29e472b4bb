"""Counters and loggers."""

import csv
import os
import struct
import threading

import numpy as np
import pytest

from acme.utils import counting, loggers


def test_child_counters_prefix_into_parent():
    parent = counting.Counter()
    actor = counting.Counter(parent, prefix="actor")
    learner = counting.Counter(parent, prefix="learner")
    actor.increment(steps=5, episodes=1)
    actor.increment(steps=3)
    learner.increment(steps=2)
    assert parent.get_counts() == {"actor_steps": 8, "actor_episodes": 1, "learner_steps": 2}
    assert actor.get_counts() == parent.get_counts()
    assert actor.get_steps_key() == "actor_steps"


def test_counter_is_thread_safe():
    counter = counting.Counter()

    def work():
        for _ in range(2000):
            counter.increment(steps=1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.get_counts()["steps"] == 8000


def test_counter_rejects_negative_and_round_trips():
    counter = counting.Counter()
    with pytest.raises(ValueError, match="non-negative"):
        counter.increment(steps=-1)
    counter.increment(steps=4)
    state = counter.save()
    other = counting.Counter()
    other.restore(state)
    assert other.get_counts() == {"steps": 4}


def test_csv_logger_widens_header_without_losing_rows(tmp_path):
    logger = loggers.CSVLogger(str(tmp_path), "actor")
    logger.write({"steps": 1, "return": np.float32(2.5)})
    logger.write({"steps": 2, "return": 3.0, "loss": 0.5})
    logger.close()
    with open(os.path.join(tmp_path, "actor.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [r["steps"] for r in rows] == ["1", "2"]
    assert rows[0]["return"] == "2.5" and rows[1]["loss"] == "0.5"


def test_terminal_logger_formats_and_time_filter_throttles():
    lines = []
    logger = loggers.TimeFilter(loggers.TerminalLogger("learner", print_fn=lines.append), time_delta=3600)
    logger.write({"loss": 0.25, "steps": 10})
    logger.write({"loss": 0.5, "steps": 11})
    assert lines == ["[learner] Loss = 0.25 | Steps = 10"]


def read_scalars(event_file) -> dict:
    """``{tag: [(step, value), ...]}`` of a TensorBoard event file: TFRecord framing (length, its CRC, the
    serialised ``Event``, its CRC) read here, the ``Event`` parsed with tensorboardX's protobuf."""
    from tensorboardX.proto import event_pb2

    data, offset, scalars = event_file.read_bytes(), 0, {}
    while offset < len(data):
        (length,) = struct.unpack("<Q", data[offset : offset + 8])
        event = event_pb2.Event.FromString(data[offset + 12 : offset + 12 + length])
        offset += 12 + length + 4
        for value in event.summary.value:
            scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars


def test_default_logger_writes_csv_and_tensorboard_without_tensorflow(tmp_path):
    logger = loggers.make_default_logger("evaluator", str(tmp_path), steps_key="actor_steps", terminal=False)
    logger.write({"actor_steps": 100, "evaluation_return": 20.0})
    logger.write({"actor_steps": 250, "evaluation_return": -3.5})
    logger.close()
    assert os.path.exists(tmp_path / "evaluator.csv")
    event_files = list((tmp_path / "evaluator").glob("events.out.tfevents.*"))
    assert len(event_files) == 1
    # Read back: the values written, at the steps_key's values, under the logger's label.
    scalars = read_scalars(event_files[0])
    assert scalars["evaluator/evaluation_return"] == [(100, 20.0), (250, -3.5)]
    assert scalars["evaluator/actor_steps"] == [(100, 100.0), (250, 250.0)]
    csv_only = loggers.make_default_logger("learner", str(tmp_path / "csv"), terminal=False, tensorboard=False)
    csv_only.write({"loss": 1.0})
    csv_only.close()
    assert os.listdir(tmp_path / "csv") == ["learner.csv"]


def test_csv_logger_continues_an_existing_file(tmp_path):
    first = loggers.CSVLogger(str(tmp_path), "actor_0")
    first.write({"steps": 1})
    first.close()
    again = loggers.CSVLogger(str(tmp_path), "actor_0")  # e.g. a restarted node
    again.write({"steps": 2, "restarted": 1})
    again.close()
    with open(tmp_path / "actor_0.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["steps"] for r in rows] == ["1", "2"]
    assert rows[1]["restarted"] == "1"
