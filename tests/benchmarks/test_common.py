"""Shared benchmark pieces: actions within the spec, and reports written whole."""

import json

import numpy as np
from dm_env import specs

from benchmarks import common


def test_random_actions_respect_the_spec_or_the_given_bounds():
    spec = specs.BoundedArray((2,), np.float32, [-2.0, 0.0], [2.0, 10.0])
    actions = np.stack(common.random_actions(spec, 500))
    assert actions.dtype == np.float32 and actions.shape == (500, 2)
    assert np.all(actions >= spec.minimum) and np.all(actions <= spec.maximum)
    canonical = np.stack(common.random_actions(spec, 500, low=-1.0, high=1.0))
    assert np.all(np.abs(canonical) <= 1.0)
    discrete = common.random_actions(specs.DiscreteArray(3, dtype=np.int32), 500)
    assert set(int(a) for a in discrete) == {0, 1, 2}


def test_write_report_leaves_only_the_finished_file(tmp_path, capsys):
    path = tmp_path / "sub" / "report.json"
    common.write_report(str(path), {"benchmark": "x", "machine": common.machine(extra=1)}, summary={"ratio": 0.5})
    assert json.loads(path.read_text())["machine"]["extra"] == 1
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]
    assert '"ratio": 0.5' in capsys.readouterr().out
