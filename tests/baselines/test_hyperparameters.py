"""An agent's hyper-parameters from the command line: --set, --config files, and the config a run writes."""

from __future__ import annotations

import json

import pytest

from baselines import hyperparameters, registry
from baselines.cli import main


@pytest.mark.parametrize("agent", registry.agent_names())
def test_every_agents_effective_config_reads_back_as_the_same_config(tmp_path, agent):
    """What a run writes (every field, every type: numbers, booleans, layer sizes, names, None) is what --config
    reads, and it builds an equal config."""
    config_class = registry.get_agent(agent).make_config
    original = config_class()
    path = tmp_path / "config.yaml"
    path.write_text(hyperparameters.describe(agent, "gymnasium:CartPole-v1", original))
    again = config_class(**hyperparameters.read_config_file(config_class, str(path), agent))
    assert again == original


@pytest.mark.parametrize("agent", registry.agent_names())
def test_every_config_field_has_a_one_line_description_that_the_config_file_shows(agent):
    """Descriptions are the fields' inline comments, or their docstring ``Attributes:`` entries."""
    config_class = registry.get_agent(agent).make_config
    descriptions = hyperparameters.field_descriptions(config_class)
    assert set(descriptions) == set(hyperparameters.config_fields(config_class))
    assert all(text and "\n" not in text for text in descriptions.values())
    text = hyperparameters.describe(agent, "gymnasium:CartPole-v1", config_class())
    for name, description in descriptions.items():  # each field's line ends with its description
        assert any(line.startswith(f"  {name}: ") and line.endswith(f"  # {description}") for line in text.splitlines())


def test_set_values_are_parsed_by_the_fields_type():
    from agents.dqn import DQNConfig
    from agents.sac import SACConfig

    overrides = hyperparameters.parse_assignments(
        DQNConfig,
        ["learning_rate=3e-4", "n_step=5", "max_replay_size=100_000", "prioritized_replay=true", "hidden_sizes=64,64"],
    )
    assert overrides == {
        "learning_rate": 3e-4,
        "n_step": 5,
        "max_replay_size": 100_000,
        "prioritized_replay": True,
        "hidden_sizes": (64, 64),
    }
    assert DQNConfig(**overrides).hidden_sizes == (64, 64)
    assert hyperparameters.parse_assignments(DQNConfig, ["n_step=1e1"]) == {"n_step": 10}
    with pytest.raises(ValueError, match=r"--set n_step is given twice \('1e1' and '2'\); give each field once\."):
        hyperparameters.parse_assignments(DQNConfig, ["n_step=1e1", "n_step=2"])
    assert hyperparameters.parse_assignments(SACConfig, ["target_entropy=none"]) == {"target_entropy": None}
    assert hyperparameters.parse_assignments(SACConfig, ["target_entropy=-2"]) == {"target_entropy": -2.0}


@pytest.mark.parametrize(
    "assignment, message",
    [
        ("learning_rat=1e-3", r"DQNConfig has no field 'learning_rat'\. Did you mean 'learning_rate'\? Its fields: "),
        ("n_step=2.5", r"--set n_step takes an integer, got '2\.5'"),
        ("prioritized_replay=maybe", r"--set prioritized_replay takes true or false, got 'maybe'"),
        ("learning_rate=fast", r"--set learning_rate takes a number, got 'fast'"),
        ("learning_rate", r"--set takes FIELD=VALUE, e\.g\. --set learning_rate=3e-4; got 'learning_rate'"),
    ],
)
def test_a_bad_assignment_is_refused_naming_the_field_and_what_it_takes(assignment, message):
    from agents.dqn import DQNConfig

    with pytest.raises(ValueError, match=message):
        hyperparameters.parse_assignments(DQNConfig, [assignment])


def test_the_command_line_refuses_a_value_the_config_refuses_and_a_file_of_another_agent(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--set", "learning_rate=-1", "--no-progress", "--run-dir", str(tmp_path / "run")])
    assert done.value.code == 2
    refused = "--set/--config: Invalid DQNConfig: learning_rate must be > 0 and finite, got -1.0."
    assert refused in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before anything was written

    sac = tmp_path / "sac.yaml"
    sac.write_text(hyperparameters.describe("sac", "gymnasium:Pendulum-v1", registry.get_agent("sac").make_config()))
    with pytest.raises(SystemExit):
        main(["config", "dqn", "--config", str(sac)])
    assert f"--config {sac} is sac's config; this run trains dqn." in capsys.readouterr().err

    flat = tmp_path / "flat.json"  # a JSON mapping of fields; --set goes over it
    flat.write_text(json.dumps({"learning_rate": 0.01, "hidden_sizes": [16, 16]}))
    assert main(["config", "dqn", "--config", str(flat), "--set", "learning_rate=0.02"]) == 0
    out = capsys.readouterr().out
    assert (
        "  learning_rate: 0.02  # the optimiser's step size\n" in out
        and "  hidden_sizes: [16, 16]  # hidden layer" in out
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n- not a mapping\n")
    with pytest.raises(SystemExit):
        main(["config", "dqn", "--config", str(bad)])
    assert "expected a mapping of config fields, got list" in capsys.readouterr().err


def test_a_decay_registered_over_the_budget_spans_a_run_of_another_length(capsys):
    """PPO on the memory task decays its step size over the registered 500k steps' optimiser steps (39,062): a run
    of 1M steps decays over twice as many, one that sets the field keeps its own, and the command line says so."""
    import argparse

    from baselines.cli import say_budget_scaled

    def decay(max_steps=None, **overrides):
        config = registry.make_experiment_config(
            "ppo", "jax:MemoryCartPole-v1", max_steps=max_steps, config_overrides=overrides
        )
        return config.builder.config.learning_rate_decay_steps

    assert decay() == decay(500_000) == 39_062
    assert decay(1_000_000) == 78_124 and decay(100_000) == 7_812
    assert decay(1_000_000, learning_rate_decay_steps=5) == 5
    say_budget_scaled(argparse.Namespace(agent="ppo", env="jax:MemoryCartPole-v1", max_steps=1_000_000), {})
    assert "learning_rate_decay_steps: 78,124 for 1,000,000 steps (the baseline registers 39,062 for its 500,000" in (
        capsys.readouterr().out
    )
    with pytest.raises(ValueError, match="budget_steps names config overrides .* 'epsilon_decay_steps' is None"):
        registry.Baseline("pqn", "jax:CartPole-v1", 1000, 1.0, budget_steps=("epsilon_decay_steps",))
