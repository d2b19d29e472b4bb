"""SAC, TD3, D4PG and MPO through one set of tests: config checks, learner sanity, builder end to end.

Each agent is reached through the baselines registry (config class, builder,
networks), so every continuous agent is held to the same contract.
"""

from __future__ import annotations

import dataclasses
import itertools

import jax
import numpy as np
import pytest

from acme import specs, types
from acme.experiments import CheckpointingConfig, ExperimentCheckpointer, ExperimentConfig, run_experiment
from acme.replay.local import ReplaySample, SampleInfo
from acme.testing import fakes
from acme.utils import loggers
from baselines import registry


@dataclasses.dataclass(frozen=True)
class Case:
    tiny: dict  # config overrides that make networks and replay small for fast tests
    invalid: tuple  # (field, value, message regex) that the config must reject


CASES = {
    "sac": Case(
        tiny=dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16)),
        invalid=(
            ("learning_rate", 0.0, "learning_rate must be > 0"),
            ("tau", 1.5, r"tau must be in \(0, 1\]"),
            ("initial_temperature", -1.0, "initial_temperature must be > 0"),
            ("critic_hidden_sizes", (), "critic_hidden_sizes must be a non-empty sequence"),
            ("batch_size", 0, "batch_size must be an integer >= 1"),
            ("max_replay_size", 10, r"max_replay_size \(10\) must be >= min_replay_size"),
        ),
    ),
    "td3": Case(
        tiny=dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16)),
        invalid=(
            ("learning_rate", 0.0, "learning_rate must be > 0"),
            ("tau", 0.0, r"tau must be in \(0, 1\]"),
            ("tau", 1.5, r"tau must be in \(0, 1\]"),
            ("policy_delay", 0, "policy_delay must be an integer >= 1"),
            ("policy_noise", -0.1, "policy_noise must be >= 0"),
            ("noise_clip", -0.5, "noise_clip must be >= 0"),
            ("exploration_sigma", -0.1, "exploration_sigma must be >= 0"),
            ("policy_hidden_sizes", (), "policy_hidden_sizes must be a non-empty sequence"),
            ("n_step", 0, "n_step must be an integer >= 1"),
        ),
    ),
    "d4pg": Case(
        tiny=dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), num_atoms=11, vmin=-10.0, vmax=10.0),
        invalid=(
            ("learning_rate", 0.0, "learning_rate must be > 0"),
            ("vmin", 200.0, r"vmin \(200.0\) must be < vmax"),
            ("vmax", 0.0, r"vmin \(0.0\) must be < vmax \(0.0\)"),
            ("num_atoms", 1, "num_atoms must be an integer >= 2"),
            ("sigma", -0.1, "sigma must be >= 0"),
            ("pre_tanh_penalty", -1e-3, "pre_tanh_penalty must be a finite number >= 0"),
            ("tau", 0.0, r"tau must be in \(0, 1\]"),
            ("n_step", 0, "n_step must be an integer >= 1"),
            ("policy_hidden_sizes", (), "policy_hidden_sizes must be a non-empty sequence"),
        ),
    ),
    "mpo": Case(
        tiny=dict(policy_hidden_sizes=(16, 16), critic_hidden_sizes=(16, 16), num_samples=4),
        invalid=(
            ("learning_rate", 0.0, "learning_rate must be > 0"),
            ("dual_learning_rate", -1.0, "dual_learning_rate must be > 0"),
            ("epsilon", 0.0, "epsilon must be > 0"),
            ("epsilon_mean", -1e-3, "epsilon_mean must be > 0"),
            ("epsilon_stddev", 0.0, "epsilon_stddev must be > 0"),
            ("pre_tanh_penalty", float("nan"), "pre_tanh_penalty must be a finite number"),
            ("num_samples", 0, "num_samples must be an integer >= 1"),
            ("num_critics", 0, "num_critics must be an integer >= 1"),
            ("tau", 0.0, r"tau must be in \(0, 1\]"),
            ("init_std", 0.0, r"init_std \(0.0\) must be > min_std"),
            ("policy_hidden_sizes", (), "policy_hidden_sizes must be a non-empty sequence"),
            ("max_replay_size", 10, r"max_replay_size \(10\) must be >= min_replay_size"),
        ),
    ),
}
AGENTS = sorted(CASES)


class ListLogger(loggers.Logger):
    def __init__(self):
        self.rows = []

    def write(self, data):
        self.rows.append(loggers.to_scalars(data))


def _parts(agent: str, spec: specs.EnvironmentSpec, **overrides):
    entry = registry.get_agent(agent)
    config = entry.make_config(**{**CASES[agent].tiny, **overrides})
    return entry, config, entry.make_builder(config), entry.make_networks(spec, config)


def _fixed_batch(spec: specs.EnvironmentSpec, batch_size: int = 32, reward=None) -> ReplaySample:
    rng = np.random.default_rng(0)
    obs_shape = spec.observations.shape
    action_size = spec.actions.shape[0]
    data = types.Transition(
        observation=rng.normal(size=(batch_size, *obs_shape)).astype(np.float32),
        action=rng.uniform(-1, 1, size=(batch_size, action_size)).astype(np.float32),
        reward=(rng.normal(size=batch_size) if reward is None else np.full(batch_size, reward)).astype(np.float32),
        discount=np.full(batch_size, 0.99, np.float32),
        next_observation=rng.normal(size=(batch_size, *obs_shape)).astype(np.float32),
    )
    info = SampleInfo(
        key=np.arange(batch_size, dtype=np.uint64),
        probability=np.full(batch_size, 1.0 / batch_size),
        table_size=np.full(batch_size, batch_size, np.int64),
        priority=np.ones(batch_size),
        times_sampled=np.ones(batch_size, np.int32),
    )
    return ReplaySample(info=info, data=data)


def _learner(agent: str, spec, batch, seed: int = 0, logger=None, **overrides):
    _, config, builder, networks = _parts(agent, spec, **overrides)
    logger = logger or loggers.NoOpLogger()
    return builder.make_learner(
        jax.random.PRNGKey(seed), networks, itertools.repeat(batch), lambda label, steps_key=None: logger, spec
    )


@pytest.mark.parametrize(
    "agent, field, value, message",
    [(agent, *bad) for agent in AGENTS for bad in CASES[agent].invalid],
)
def test_invalid_config_values_are_rejected(agent, field, value, message):
    entry = registry.get_agent(agent)
    with pytest.raises(ValueError, match=message):
        entry.make_config(**{field: value})


@pytest.mark.parametrize("agent", AGENTS)
def test_config_is_frozen(agent):
    config = registry.get_agent(agent).make_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.discount = 0.5  # type: ignore[misc]


@pytest.mark.parametrize("agent", AGENTS)
def test_networks_need_canonical_continuous_actions(agent):
    entry = registry.get_agent(agent)
    config = entry.make_config(**CASES[agent].tiny)
    with pytest.raises(ValueError, match="bounded continuous action space"):
        entry.make_networks(fakes.discrete_spec(), config)
    wide = fakes.continuous_spec()._replace(actions=specs.BoundedArray((1,), np.float32, -2.0, 2.0))
    with pytest.raises(ValueError, match="canonical_actions=True"):
        entry.make_networks(wide, config)


@pytest.mark.parametrize("agent", AGENTS)
def test_mismatched_networks_and_environment_are_explained(agent):
    _, _, builder, networks = _parts(agent, fakes.continuous_spec(obs_shape=(3,)))
    with pytest.raises(ValueError, match="observations of shape"):
        builder.make_policy(networks, fakes.continuous_spec(obs_shape=(5,)))


@pytest.mark.parametrize("agent", AGENTS)
def test_one_learner_step_on_a_fixed_batch(agent):
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    logger = ListLogger()
    learner = _learner(agent, spec, _fixed_batch(spec), logger=logger)
    before = jax.tree.map(np.array, learner.save())
    learner.step()
    assert learner.num_steps == 1
    row = logger.rows[0]
    losses = {k: v for k, v in row.items() if k.endswith("loss")}
    assert losses and all(np.isfinite(v) for v in losses.values()), row
    after = learner.save()
    for name in ("policy_params", "critic_params"):
        changed = jax.tree.map(lambda a, b: not np.array_equal(a, b), getattr(before, name), getattr(after, name))
        assert any(jax.tree.leaves(changed)), f"{name} did not change after one step"


@pytest.mark.parametrize("agent", AGENTS)
def test_learner_reports_non_finite_losses_clearly(agent):
    spec = fakes.continuous_spec()
    learner = _learner(agent, spec, _fixed_batch(spec, reward=np.nan))
    with pytest.raises(FloatingPointError, match="became nan at learner step 1"):
        learner.step()


@pytest.mark.parametrize("agent", AGENTS)
def test_learner_save_restore_round_trip_is_bitwise(agent, tmp_path):
    """Through an experiment checkpoint on disk: parameters, optimiser and target states, step and key."""
    spec = fakes.continuous_spec()
    batch = _fixed_batch(spec)
    learner = _learner(agent, spec, batch, seed=0)
    learner.run(num_steps=3)
    checkpointing = CheckpointingConfig(str(tmp_path), every_learner_steps=1)
    identity = {"builder": agent, "environment": "fake"}
    ExperimentCheckpointer(checkpointing, identity).save(learner.save(), learner.num_steps, counts={})
    restored = ExperimentCheckpointer(checkpointing, identity).restore()
    assert restored is not None and restored.learner_steps == 3
    other = _learner(agent, spec, batch, seed=1)
    other.restore(restored.learner_state)
    for a, b in zip(jax.tree.leaves(learner.save()), jax.tree.leaves(other.save())):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert other.num_steps == 3
    # Both continue identically from the same state.
    learner.step()
    other.step()
    for a, b in zip(jax.tree.leaves(learner.save()), jax.tree.leaves(other.save())):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("agent", AGENTS)
def test_restore_rejects_a_state_of_another_shape(agent):
    spec = fakes.continuous_spec()
    batch = _fixed_batch(spec)
    small = _learner(agent, spec, batch)
    other_spec = fakes.continuous_spec(obs_shape=(4,))
    big = _learner(agent, other_spec, _fixed_batch(other_spec))
    with pytest.raises(ValueError, match="another structure or shape"):
        small.restore(big.save())


@pytest.mark.parametrize("agent", AGENTS)
def test_builder_runs_end_to_end_on_a_fake_environment(agent):
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    entry, config, builder, _ = _parts(agent, spec, batch_size=8, min_replay_size=20, samples_per_insert=4.0)
    experiment = ExperimentConfig(
        builder=builder,
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=20),
        network_factory=lambda s: entry.make_networks(s, config),
        seed=0,
        max_num_actor_steps=200,
        eval_every=100,
        num_eval_episodes=2,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 200
    # samples_per_insert 4 at batch 8: one learner step per two inserted transitions after the first 20
    # (90), give or take the limiter's error buffer of 32 inserts (16 learner steps).
    assert 74 <= result.learner_steps <= 106
    assert [e.actor_steps for e in result.evaluations] == [100, 200]
    assert all(e.mean_return == pytest.approx(210.0) for e in result.evaluations)  # rewards 1..20


@pytest.mark.parametrize("agent", AGENTS)
def test_policies_act_inside_the_canonical_box(agent):
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    _, _, builder, networks = _parts(agent, spec)
    learner = _learner(agent, spec, _fixed_batch(spec))
    params = learner.get_variables(["policy"])[0]
    observation = np.ones(3, np.float32) * 3.0
    for evaluation in (False, True):
        policy = jax.jit(builder.make_policy(networks, spec, evaluation=evaluation))
        actions = np.stack([np.asarray(policy(params, jax.random.PRNGKey(i), observation, i)) for i in range(20)])
        assert actions.shape == (20, 2) and actions.dtype == np.float32
        assert np.all(np.abs(actions) <= 1.0)
        spread = np.ptp(actions, axis=0)
        if evaluation:
            assert np.allclose(spread, 0.0), "evaluation actions must be deterministic"
        else:
            assert np.all(spread > 0.0), "exploratory actions must vary with the key"
