"""The offline baselines' recipe end to end at a tiny budget: datasets from an agent's own runs, the offline
agents over seeds, the record and the report's section."""

from __future__ import annotations

import json
import os

import pytest

from baselines import offline, registry


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # runs/ goes here
    monkeypatch.setitem(
        offline.RECIPES, "gymnasium:CartPole-v1", offline.Recipe("cartpole", "dqn", 600, 300, episodes=2, seed=5)
    )
    monkeypatch.setitem(
        offline.PLANS, "gymnasium:CartPole-v1", offline.Plan((("bc", "expert"), ("bc", "medium-replay")), 200)
    )
    return tmp_path


def test_datasets_then_offline_runs_then_the_report_section(tiny, capsys):
    datasets = str(tiny / "datasets")
    offline.make_datasets("gymnasium:CartPole-v1", datasets)
    for name in ("expert", "medium", "medium-replay"):
        assert os.path.exists(os.path.join(datasets, f"cartpole-{name}", "data", "metadata.json"))
    offline.make_datasets("gymnasium:CartPole-v1", datasets)  # everything exists: nothing runs again
    assert capsys.readouterr().out.count("done already") == 4

    output = str(tiny / "offline.json")
    record = offline.reproduce("gymnasium:CartPole-v1", [0, 1], datasets, output)
    assert [(r["agent"], r["dataset"], r["seed"]) for r in record["runs"]] == [
        ("bc", "expert", 0),
        ("bc", "expert", 1),
        ("bc", "medium-replay", 0),
        ("bc", "medium-replay", 1),
    ]
    assert record["datasets"]["expert"]["episodes"] == 2
    assert 0 < record["datasets"]["medium-replay"]["steps"] <= 300  # the finished episodes of a 300-step run
    assert json.load(open(output))["gymnasium:CartPole-v1"] == record
    section = offline.offline_section(output)
    assert "### gymnasium:CartPole-v1" in section and "| bc | expert |" in section
    assert "python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 5" in section


def test_an_environment_without_a_recipe_is_refused():
    recipes = "recipes: dm_control:cartpole/swingup, gymnasium:CartPole"
    with pytest.raises(ValueError, match=f"No offline recipe for 'gymnasium:Acrobot-v1'; {recipes}"):
        offline.dataset_commands("gymnasium:Acrobot-v1")


def test_a_recipe_trains_with_its_own_settings_beyond_the_baseline():
    """The swingup datasets were made at half an update per step with one-step targets, which the swingup baseline no
    longer registers."""
    trainings = offline.dataset_commands("dm_control:cartpole/swingup")[0::2]
    kept = "--set samples_per_insert=128.0 --set n_step=1"
    assert [command.split(" --run-dir ")[1] for command in trainings] == [
        f"runs/datasets/swingup-expert-run {kept}",
        f"runs/datasets/swingup-medium-run --record runs/datasets/swingup-medium-replay {kept}",
    ]
    assert registry.BASELINES[("sac", "dm_control:cartpole/swingup")].config_overrides == {"n_step": 3}
