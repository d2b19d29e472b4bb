"""IMPALA with a recurrent network: the LSTM unroll and its resets, the state actors store, vectorised recurrent
acting, a learner step, config checks, end to end and snapshots."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments import ExperimentConfig, run_experiment
from acme.jax.actors import RecurrentPolicy, RecurrentVectorActor
from acme.jax.on_policy import policy_value_over_time
from acme.jax.policy_value import make_recurrent_policy_value_networks
from acme.replay.local import ReplaySample, SampleInfo
from acme.replay.local_client import LocalReplay
from acme.testing import fakes
from acme.utils import loggers
from baselines import registry
from baselines.policy_export import evaluate_snapshot, export_policy

TINY = dict(hidden_sizes=(8,), lstm_size=6, unroll_length=4, batch_size=2)
SPEC = fakes.discrete_spec(obs_shape=(3,), num_actions=3)


def _no_logs(label, steps_key=None):
    return loggers.NoOpLogger()


def _parts(spec=SPEC, **overrides):
    entry = registry.get_agent("impala")
    config = entry.make_config(**{**TINY, **overrides})
    return config, entry.make_builder(config), entry.make_networks(spec, config)


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_an_unroll_resets_at_episode_starts_and_equals_stepping(kind):
    spec = SPEC if kind == "discrete" else fakes.continuous_spec((3,), 2)
    networks = make_recurrent_policy_value_networks(spec, (8,), lstm_size=5)
    params = networks.init(jax.random.PRNGKey(0))["network"]
    time, batch = 7, 2
    observations = jax.random.normal(jax.random.PRNGKey(1), (time, batch, 3))
    starts = np.zeros((time, batch), bool)
    starts[3, 0] = starts[5, 1] = True
    state = jax.tree.map(lambda x: x + 0.3, networks.initial_state(params, batch))  # not the initial state
    (unrolled_policy, unrolled_values), _ = networks.unroll(params, observations, starts, state)

    initial = networks.initial_state(params, batch)
    for t in range(time):
        state = jax.tree.map(lambda s, i: jnp.where(starts[t][:, None], i, s), state, initial)
        (policy_output, value), state = networks.step(params, observations[t], state)
        np.testing.assert_allclose(value, unrolled_values[t], rtol=1e-5, atol=1e-6)
        for a, b in zip(jax.tree.leaves(policy_output), jax.tree.leaves(unrolled_policy)):
            np.testing.assert_allclose(a, b[t], rtol=1e-5, atol=1e-6)


def _stored_rollouts(steps: int = 30):
    config, builder, networks = _parts()
    replay = LocalReplay(builder.make_replay_tables(SPEC), wait_on_insert=False)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, SPEC)
    policy = builder.make_policy(networks, SPEC)
    actor = builder.make_actor([jax.random.PRNGKey(1)], policy, SPEC, learner, [builder.make_adder(replay, SPEC)])
    assert isinstance(policy, RecurrentPolicy) and isinstance(actor, RecurrentVectorActor)
    environment = fakes.FakeEnvironment(SPEC, episode_length=5, truncate=True)
    EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(steps)
    table = replay.table(config.replay_table_name)
    return table.sample(len(table)).data, networks, learner


def test_rollouts_store_the_state_each_action_was_chosen_from():
    rollouts, networks, learner = _stored_rollouts()
    assert rollouts.extras["core_state"]["hidden"].shape == (8, 5, 6)
    starts = np.asarray(rollouts.start_of_episode)
    for leaf in jax.tree.leaves(rollouts.extras["core_state"]):
        assert np.all(np.asarray(leaf)[starts] == 0.0)  # reset at every episode start
        assert np.any(np.asarray(leaf)[~starts] != 0.0)
    # Unrolled from each rollout's first stored state (reset at episode starts), the learner's network gives
    # the behaviour log-probabilities the actor stored.
    params = {"network": learner.get_variables(["policy"])[0][0]}
    observations = jnp.asarray(rollouts.observation)
    policy_output, _ = policy_value_over_time(networks, params, rollouts, observations)
    log_prob = networks.distribution(policy_output[:, :4]).log_prob(rollouts.extras["raw_action"][:, :4])
    acted = ~starts[:, 1:]
    np.testing.assert_allclose(np.asarray(log_prob)[acted], rollouts.extras["log_prob"][:, :4][acted], atol=1e-5)


def test_the_learner_starts_each_rollout_from_its_first_stored_state_only():
    rollouts, networks, learner = _stored_rollouts()
    params = {"network": learner.get_variables(["policy"])[0][0]}
    observations = jnp.asarray(rollouts.observation)
    rollouts = jax.tree.map(np.array, rollouts)
    rollouts.start_of_episode[:] = False  # no resets: the stored first state carries through the rollout
    base, _ = policy_value_over_time(networks, params, rollouts, observations)

    def perturbed(step):
        changed = jax.tree.map(np.array, rollouts)
        changed.extras["core_state"]["hidden"][:, step] += 1.0
        return policy_value_over_time(networks, params, changed, observations)[0]

    np.testing.assert_array_equal(perturbed(2), base)  # later stored states are not read
    assert np.all(np.abs(np.asarray(perturbed(0)) - np.asarray(base))[:, 0] > 0)


def test_k_recurrent_environments_act_as_k_recurrent_actors_with_the_same_keys():
    config, builder, networks = _parts()
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, SPEC)
    policy = builder.make_policy(networks, SPEC)
    keys = list(jax.random.split(jax.random.PRNGKey(7), 3))
    lengths = [4, 5, 7]

    singles = []
    for key, length in zip(keys, lengths):
        replay = LocalReplay(builder.make_replay_tables(SPEC), wait_on_insert=False)
        actor = builder.make_actor([key], policy, SPEC, learner, [builder.make_adder(replay, SPEC)])
        environment = fakes.FakeEnvironment(SPEC, episode_length=length)
        EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(40)
        singles.append(replay)

    replays = [LocalReplay(builder.make_replay_tables(SPEC), wait_on_insert=False) for _ in keys]
    actor = builder.make_actor(keys, policy, SPEC, learner, [builder.make_adder(r, SPEC) for r in replays])
    assert isinstance(actor, RecurrentVectorActor)
    environments = [fakes.FakeEnvironment(SPEC, episode_length=length) for length in lengths]
    EnvironmentLoop(environments, actor, logger=loggers.NoOpLogger(), should_update=False).run(120)

    name = config.replay_table_name
    for single, vector in zip(singles, replays):
        a, b = single.table(name), vector.table(name)
        assert len(a) == len(b) > 0
        for x, y in zip(jax.tree.leaves(a.sample(len(a)).data), jax.tree.leaves(b.sample(len(b)).data)):
            assert x.shape == y.shape and x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_one_learner_step_changes_the_parameters_and_keeps_losses_finite():
    rollouts, networks, _ = _stored_rollouts()
    config, builder, networks = _parts()
    batch = jax.tree.map(lambda x: x[:2], rollouts)
    sample = ReplaySample(SampleInfo(*(np.zeros(2) for _ in SampleInfo._fields)), batch)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(lambda: sample, None), _no_logs, SPEC)
    before = jax.tree.leaves(jax.device_get(learner.state.params))
    learner.step()
    learner.check_finite()
    after = jax.tree.leaves(jax.device_get(learner.state.params))
    assert all(not np.allclose(a, b) for a, b in zip(before, after))


def test_lstm_size_is_checked_against_the_networks():
    with pytest.raises(ValueError, match="lstm_size must be an integer >= 1"):
        registry.get_agent("impala").make_config(**{**TINY, "lstm_size": 0})
    _, recurrent_builder, recurrent_networks = _parts()
    _, feed_forward_builder, feed_forward_networks = _parts(lstm_size=None)
    with pytest.raises(ValueError, match=r"have no LSTM but the config says lstm_size=6"):
        recurrent_builder.make_policy(feed_forward_networks, SPEC)
    with pytest.raises(ValueError, match=r"have an LSTM of 6 but the config says lstm_size=None"):
        feed_forward_builder.make_policy(recurrent_networks, SPEC)


def test_recurrent_impala_runs_end_to_end_with_vectorised_environments():
    entry = registry.get_agent("impala")
    config, builder, _ = _parts()
    experiment = ExperimentConfig(
        builder=builder,
        environment_factory=lambda seed: fakes.FakeEnvironment(SPEC, episode_length=10),
        network_factory=lambda s: entry.make_networks(s, config),
        seed=0,
        max_num_actor_steps=100,
        eval_every=50,
        num_eval_episodes=2,
        logger_factory=_no_logs,
        num_envs_per_actor=2,
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 100 and result.learner_steps == 13  # as the feed-forward agents
    assert all(e.mean_return == pytest.approx(55.0) for e in result.evaluations)


def test_a_recurrent_impala_snapshot_evaluates_like_its_actor(tmp_path):
    from acme.environments import make_environment

    env_id = "gymnasium:CartPole-v1"
    spec = specs.make_environment_spec(make_environment(env_id, seed=0))
    config, builder, networks = _parts(spec)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, spec)
    params = jax.device_get(learner.get_variables(["policy"])[0])
    export_policy(str(tmp_path / "policy"), "impala", env_id, config, params)
    returns = evaluate_snapshot(str(tmp_path / "policy"), episodes=2, seed=0)
    # By hand: the evaluation policy with its state carried across the episode's steps.
    policy = builder.make_policy(networks, spec, evaluation=True)
    step = jax.jit(policy.policy)
    environment = registry.make_agent_environment("impala", env_id, seed=0)
    by_hand = []
    for _ in range(2):
        timestep, state, total = environment.reset(), policy.initial_state(params), 0.0
        while not timestep.last():
            action, _, state = step(params, jax.random.PRNGKey(0), timestep.observation, state, 0)
            timestep = environment.step(int(action))
            total += float(timestep.reward)
        by_hand.append(total)
    assert returns == by_hand
