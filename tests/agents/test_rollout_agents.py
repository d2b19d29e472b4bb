"""PPO and IMPALA through one set of tests: stored rollouts, a learner step, the policy-lag bound, end to end.

Both are a loss on the shared rollout builder (``acme.agents.rollout_builder``), reached through the baselines
registry, so both are held to one contract.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme.adders import Step
from acme.environment_loop import EnvironmentLoop
from acme.experiments import ExperimentConfig, run_experiment
from acme.replay.local import ReplaySample, SampleInfo
from acme.replay.local_client import LocalReplay
from acme.testing import fakes
from acme.utils import loggers
from baselines import registry

AGENTS = ("ppo", "impala")
TINY = {
    "ppo": dict(hidden_sizes=(8,), unroll_length=4, batch_size=2, num_epochs=2, num_minibatches=2),
    "impala": dict(hidden_sizes=(8,), unroll_length=4, batch_size=2),
}
SPECS = {"discrete": fakes.discrete_spec(obs_shape=(3,), num_actions=3), "continuous": fakes.continuous_spec((3,), 2)}


def _no_logs(label, steps_key=None):
    return loggers.NoOpLogger()


def _parts(agent: str, kind: str = "discrete", **overrides):
    entry = registry.get_agent(agent)
    config = entry.make_config(**{**TINY[agent], **overrides})
    spec = SPECS[kind]
    return spec, config, entry.make_builder(config), entry.make_networks(spec, config)


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("unroll_length", 2.5, "unroll_length must be an integer >= 1"),
        ("queue_size", 1, r"queue_size \(1\) must be >= batch_size \(2\)"),
        ("max_policy_lag", -1, "max_policy_lag must be None or an integer >= 0"),
        ("max_policy_lag", True, "max_policy_lag must be None or an integer >= 0"),
        ("hidden_sizes", (), "hidden_sizes must be a non-empty sequence"),
        ("entropy_coef", -0.1, "entropy_coef must be >= 0"),
        ("discount", 1.5, r"discount must be in \[0, 1\]"),
        ("evaluation_actions", "greedy", "evaluation_actions must be one of mode, sample, got 'greedy'"),
    ],
)
def test_invalid_config_values_are_rejected(agent, field, value, message):
    with pytest.raises(ValueError, match=message):
        registry.get_agent(agent).make_config(**{**TINY[agent], field: value})


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_networks_fit_the_action_space(agent, kind):
    _, _, _, networks = _parts(agent, kind)
    params = networks.init(jax.random.PRNGKey(0))
    observations = jnp.ones((5, 3))
    distribution = networks.distribution(networks.policy.apply(params["policy"], observations))
    sample = distribution.sample(seed=jax.random.PRNGKey(1))
    assert sample.shape == ((5,) if kind == "discrete" else (5, 2))
    assert distribution.log_prob(sample).shape == (5,)
    assert networks.value.apply(params["value"], observations).shape == (5,)


@pytest.mark.parametrize("agent", AGENTS)
def test_networks_of_another_action_space_are_refused(agent):
    spec, _, builder, _ = _parts(agent, "discrete")
    _, _, _, continuous_networks = _parts(agent, "continuous")
    with pytest.raises(ValueError, match="built for continuous actions but the environment's are discrete"):
        builder.make_policy(continuous_networks, spec)


def _stored_rollouts(agent: str, kind: str, steps: int = 30):
    """Acts ``steps`` steps with an untrained learner's parameters; returns the queue's items and the parts."""
    spec, config, builder, networks = _parts(agent, kind)
    replay = LocalReplay(builder.make_replay_tables(spec), wait_on_insert=False)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, spec)
    policy = builder.make_policy(networks, spec)
    actor = builder.make_actor([jax.random.PRNGKey(1)], policy, spec, learner, [builder.make_adder(replay, spec)])
    environment = fakes.FakeEnvironment(spec, episode_length=5, truncate=True)
    EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(steps)
    table = replay.table(config.replay_table_name)
    return table.sample(len(table)).data, networks, learner


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_rollouts_overlap_by_one_step_and_carry_the_behaviour_log_probability(agent, kind):
    rollouts, networks, learner = _stored_rollouts(agent, kind)
    # 30 steps of 5-step episodes make 6 episodes of 6 stream steps (the last with its final observation):
    # 36 steps, rollouts of 5 starting every 4 steps: 8 of them.
    assert rollouts.reward.shape == (8, 5)
    np.testing.assert_array_equal(rollouts.observation[:-1, -1], rollouts.observation[1:, 0])
    starts = np.asarray(rollouts.start_of_episode).reshape(-1)
    assert starts[0] and starts.sum() >= 6
    assert np.all(rollouts.extras["policy_step"] == 0)  # the learner has not stepped
    params, _, _ = learner.get_variables(["policy"])[0]
    acted = ~np.asarray(rollouts.start_of_episode[:, 1:])  # steps followed by a new episode are final steps
    observations = np.asarray(rollouts.observation[:, :4]).reshape(-1, 3)
    distribution = networks.distribution(networks.policy.apply(params, observations))
    raw = np.asarray(rollouts.extras["raw_action"][:, :4])
    expected = np.asarray(distribution.log_prob(raw.reshape(-1, *raw.shape[2:]))).reshape(8, 4)
    np.testing.assert_allclose(
        np.asarray(rollouts.extras["log_prob"][:, :4])[acted], expected[acted], rtol=1e-5, atol=1e-6
    )
    if kind == "continuous":
        np.testing.assert_array_equal(rollouts.action, np.clip(rollouts.extras["raw_action"], -1, 1))
    else:
        np.testing.assert_array_equal(rollouts.action[:, :4][acted], rollouts.extras["raw_action"][:, :4][acted])


def _fixed_batch(policy_steps) -> Step:
    """Two rollouts of five steps in the discrete spec, acted on parameters of the given learner steps."""
    rng = np.random.default_rng(0)
    shape = (2, 5)
    return Step(
        observation=rng.normal(size=(*shape, 3)).astype(np.float32),
        action=rng.integers(0, 3, shape).astype(np.int32),
        reward=rng.normal(size=shape).astype(np.float32),
        discount=np.ones(shape, np.float32),
        start_of_episode=np.zeros(shape, bool),
        extras={
            "log_prob": np.full(shape, np.log(1 / 3), np.float32),
            "policy_step": np.asarray(policy_steps, np.int32)[:, None] * np.ones(shape, np.int32),
            "raw_action": rng.integers(0, 3, shape).astype(np.int32),
        },
    )


def _learner(agent: str, batch: Step, **overrides):
    spec, _, builder, networks = _parts(agent, "discrete", **overrides)
    sample = ReplaySample(SampleInfo(*(np.zeros(2) for _ in SampleInfo._fields)), batch)
    return builder.make_learner(jax.random.PRNGKey(0), networks, iter(lambda: sample, None), _no_logs, spec)


def _params(learner) -> list:
    return jax.tree.leaves(jax.device_get(learner.state.params))


@pytest.mark.parametrize("agent", AGENTS)
def test_one_learner_step_changes_the_parameters_and_keeps_losses_finite(agent):
    learner = _learner(agent, _fixed_batch([0, 0]))
    before = _params(learner)
    learner.step()
    learner.check_finite()
    assert all(not np.allclose(a, b) for a, b in zip(before, _params(learner)))
    assert int(learner.state.steps) == 1 and int(learner.state.dropped_rollouts) == 0


@pytest.mark.parametrize("agent", AGENTS)
def test_rollouts_past_the_policy_lag_bound_are_dropped_and_counted(agent):
    # At learner step 0, a rollout acted on by step -3's parameters lags by 3; the bound is 2.
    learner = _learner(agent, _fixed_batch([-3, 0]), max_policy_lag=2)
    learner.step()
    assert int(learner.state.dropped_rollouts) == 1
    learner.step()  # now step 1: the rollouts lag by 4 and 1
    assert int(learner.state.dropped_rollouts) == 2


@pytest.mark.parametrize("agent", AGENTS)
def test_a_batch_entirely_past_the_bound_leaves_the_parameters_alone(agent):
    learner = _learner(agent, _fixed_batch([-5, -5]), max_policy_lag=1)
    before = _params(learner)
    learner.step()
    assert all(np.array_equal(a, b) for a, b in zip(before, _params(learner)))
    assert int(learner.state.dropped_rollouts) == 2


def test_impala_learns_from_its_rewards_times_reward_scale():
    # A step on rewards r at reward_scale 0.1 is the step on rewards 0.1 r at 1.0, and not the step on r at 1.0.
    batch = _fixed_batch([0, 0])
    scaled_batch = batch._replace(reward=0.1 * batch.reward)
    learners = [
        _learner("impala", batch, reward_scale=0.1),
        _learner("impala", scaled_batch),
        _learner("impala", batch),
    ]
    for learner in learners:
        learner.step()
    scaled, by_hand, unscaled = (_params(learner) for learner in learners)
    for a, b in zip(scaled, by_hand):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert any(not np.allclose(a, b) for a, b in zip(scaled, unscaled))


@pytest.mark.parametrize("agent", AGENTS)
def test_without_a_bound_no_rollout_is_dropped(agent):
    learner = _learner(agent, _fixed_batch([-50, 0]))
    learner.step()
    assert int(learner.state.dropped_rollouts) == 0


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_builder_runs_end_to_end_with_vectorised_environments(agent, kind):
    spec, config, builder, _ = _parts(agent, kind)
    entry = registry.get_agent(agent)
    experiment = ExperimentConfig(
        builder=builder,
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=10),
        network_factory=lambda s: entry.make_networks(s, config),
        seed=0,
        max_num_actor_steps=100,
        eval_every=50,
        num_eval_episodes=2,
        logger_factory=_no_logs,
        num_envs_per_actor=2,
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 100
    # Each environment: 50 steps = 5 episodes of 11 stream steps = 55; rollouts of 5 every 4 steps: 13 each, and the
    # learner takes them 2 at a time.
    assert result.learner_steps == 13
    assert [e.actor_steps for e in result.evaluations] == [50, 100]
    assert all(e.mean_return == pytest.approx(55.0) for e in result.evaluations)  # rewards 1..10


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("evaluation_actions", ["mode", "sample"])
def test_evaluation_acts_on_the_mode_or_samples_as_configured(agent, evaluation_actions):
    spec, _, builder, networks = _parts(agent, "continuous", evaluation_actions=evaluation_actions)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, spec)
    params = learner.get_variables(["policy"])[0]
    policy = jax.jit(builder.make_policy(networks, spec, evaluation=True))
    observation = np.ones(3, np.float32)
    mean, _ = networks.policy.apply(params[0], observation[None])
    actions = np.stack([policy(params, jax.random.PRNGKey(i), observation, 0) for i in range(3)])
    if evaluation_actions == "mode":
        np.testing.assert_allclose(actions, np.broadcast_to(np.clip(mean[0], -1, 1), actions.shape))
    else:  # a draw per key, not the mean
        assert len({tuple(a) for a in actions}) == 3 and not np.allclose(actions[0], np.clip(mean[0], -1, 1))


@pytest.mark.parametrize("agent", AGENTS)
def test_a_config_of_another_agent_is_refused(agent):
    from agents.dqn import DQNConfig

    builder_class = type(_parts(agent)[2])
    with pytest.raises(TypeError, match=f"{builder_class.__name__} takes a .*Config, got a DQNConfig"):
        builder_class(DQNConfig())


@pytest.mark.parametrize("agent", AGENTS)
def test_a_queue_too_small_for_the_actors_environments_is_refused(agent):
    spec, _, builder, networks = _parts(agent, queue_size=4)  # batch 2: holds 2 + 3 - 1 rollouts at most
    keys = list(jax.random.split(jax.random.PRNGKey(0), 4))
    policy = builder.make_policy(networks, spec)
    with pytest.raises(ValueError, match=r"queue_size \(4\) must be at least batch_size \+ num_envs_per_actor - 1"):
        builder.make_actor(keys, policy, spec, variable_source=object(), adders=[None] * 4)
    # Without adders (the evaluator's actor) nothing is queued: any number of environments.
    assert builder.make_actor(keys, policy, spec, variable_source=object()).num_envs == 4


@pytest.mark.parametrize("agent", AGENTS)
def test_the_training_policy_returns_the_environments_dtype_and_its_extras(agent):
    spec, _, builder, networks = _parts(agent, "discrete")
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, spec)
    policy = builder.make_policy(networks, spec).policy
    params = learner.get_variables(["policy"])[0]
    action, extras = jax.jit(policy)(params, jax.random.PRNGKey(0), np.ones(3, np.float32), 0)
    assert np.asarray(action).dtype == spec.actions.dtype
    assert set(extras) == {"log_prob", "policy_step", "raw_action"}
