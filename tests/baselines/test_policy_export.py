"""Policy snapshots: export, reload with identical actions, greedy evaluation, and the CLI."""

import os

import jax
import numpy as np
import pytest

from acme import specs
from acme.environments import make_environment
from acme.snapshots import load_policy_snapshot, save_policy_snapshot
from acme.utils.checkpoint_files import CheckpointError
from agents import dqn
from baselines import cli, registry
from baselines.policy_export import evaluate_snapshot, export_policy, load_policy

ENV = "gymnasium:CartPole-v1"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    config = dqn.DQNConfig(hidden_sizes=(16, 8))
    spec = specs.make_environment_spec(make_environment(ENV, seed=0))
    networks = dqn.make_networks(spec, config.hidden_sizes)
    params = networks.init(jax.random.PRNGKey(3))
    policy = dqn.DQNBuilder(config).make_policy(networks, spec, evaluation=True)
    directory = str(tmp_path_factory.mktemp("snap") / "policy")
    export_policy(directory, "dqn", ENV, config, params)
    return directory, policy, params, spec


def test_loaded_policy_acts_exactly_like_the_live_one(exported):
    directory, live_policy, live_params, spec = exported
    policy, environment, params = load_policy(directory)
    assert specs.make_environment_spec(environment).actions.num_values == spec.actions.num_values
    for a, b in zip(jax.tree.leaves(live_params), jax.tree.leaves(params)):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    rng = np.random.default_rng(0)
    observations = rng.normal(size=(20, 4)).astype(np.float32)
    keys = jax.random.split(jax.random.PRNGKey(0), 20)
    live = jax.jit(live_policy)
    loaded = jax.jit(policy)
    live_actions = [int(live(live_params, k, o, 0)) for k, o in zip(keys, observations)]
    loaded_actions = [int(loaded(params, k, o, 0)) for k, o in zip(keys, observations)]
    assert live_actions == loaded_actions
    _, metadata = load_policy_snapshot(directory)
    assert metadata["agent"] == "dqn" and metadata["environment_id"] == ENV
    assert metadata["agent_config"]["hidden_sizes"] == [16, 8]


def test_evaluate_snapshot_returns_finite_returns(exported):
    returns = evaluate_snapshot(exported[0], episodes=3, seed=1)
    assert len(returns) == 3
    # The same greedy policy, run by hand on the same seeded environment, gets the same returns.
    directory, live_policy, live_params, _ = exported
    environment = registry.make_agent_environment("dqn", ENV, seed=1)
    live = jax.jit(live_policy)
    by_hand = []
    for _ in range(3):
        timestep, total = environment.reset(), 0.0
        while not timestep.last():
            timestep = environment.step(int(live(live_params, jax.random.PRNGKey(0), timestep.observation, 0)))
            total += float(timestep.reward)
        by_hand.append(total)
    assert returns == by_hand
    assert evaluate_snapshot(exported[0], episodes=3, seed=1) == returns  # greedy and seeded: reproducible
    with pytest.raises(ValueError, match="episodes must be an integer >= 1"):
        evaluate_snapshot(exported[0], episodes=0)


def test_cli_evaluate_prints_each_return_and_the_mean(exported, capsys):
    assert cli.main(["evaluate", "--snapshot", exported[0], "--episodes", "2", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("episode ") == 2
    assert "mean return over 2 episodes:" in out


def test_missing_snapshot_is_a_clear_error(tmp_path, capsys):
    missing = str(tmp_path / "nowhere")
    with pytest.raises(CheckpointError, match="No policy snapshot at .*nowhere"):
        load_policy(missing)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", "--snapshot", missing, "--episodes", "1"])
    assert exit_info.value.code == 2
    assert "No policy snapshot" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CheckpointError, match="no manifest.json"):
        load_policy(str(empty))


def test_snapshot_overwrite_is_atomic_and_checked(tmp_path):
    directory = str(tmp_path / "snap")
    save_policy_snapshot(directory, {"w": np.zeros(3)}, {"agent": "x"})
    save_policy_snapshot(directory, {"w": np.ones(3)}, {"agent": "y"})
    params, metadata = load_policy_snapshot(directory)
    assert metadata == {"agent": "y"} and params["w"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["snap"]
    with pytest.raises(CheckpointError, match="lacks metadata"):
        load_policy(directory)


@pytest.mark.parametrize("agent", ["sac", "td3", "d4pg", "mpo"])
def test_continuous_snapshots_act_exactly_like_the_live_policy(agent, tmp_path):
    from acme.utils import loggers
    from baselines import registry

    pendulum = "gymnasium:Pendulum-v1"
    entry = registry.get_agent(agent)
    config = entry.make_config(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), normalize_observations=True)
    spec = specs.make_environment_spec(make_environment(pendulum, seed=0, canonical_actions=True))
    networks = entry.make_networks(spec, config)
    builder = entry.make_builder(config)
    learner = builder.make_learner(
        jax.random.PRNGKey(1), networks, iter(()), lambda label, steps_key=None: loggers.NoOpLogger(), spec
    )
    live_params = jax.device_get(learner.get_variables(["policy"])[0])
    live_policy = jax.jit(builder.make_policy(networks, spec, evaluation=True))
    directory = export_policy(str(tmp_path / "policy"), agent, pendulum, config, live_params)

    policy, environment, params = load_policy(directory)
    assert specs.make_environment_spec(environment).actions == spec.actions
    observations = np.random.default_rng(0).normal(size=(20, 3)).astype(np.float32)
    keys = jax.random.split(jax.random.PRNGKey(0), 20)
    loaded = jax.jit(policy)
    for key, observation in zip(keys, observations):
        np.testing.assert_array_equal(
            np.asarray(live_policy(live_params, key, observation, 0)), np.asarray(loaded(params, key, observation, 0))
        )
    returns = evaluate_snapshot(directory, episodes=1)
    assert len(returns) == 1 and np.isfinite(returns[0])
