"""DQN: config validation, networks, learner sanity, builder end-to-end on a fake environment."""

import dataclasses
import itertools

import jax
import numpy as np
import pytest

from acme import specs, types
from acme.experiments import ExperimentConfig, run_experiment
from acme.replay.local import ReplaySample, SampleInfo
from acme.replay.local_client import LocalReplay
from acme.testing import fakes
from acme.utils import loggers
from agents import dqn


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("learning_rate", -1e-3, "learning_rate must be > 0"),
        ("batch_size", 0, "batch_size must be an integer >= 1"),
        ("n_step", 0, "n_step must be an integer >= 1"),
        ("discount", 1.5, r"discount must be in \[0, 1\]"),
        ("epsilon_end", -0.1, "epsilon_end must be a probability"),
        ("samples_per_insert", 0.0, "samples_per_insert must be > 0"),
        ("hidden_sizes", (), "hidden_sizes must be a non-empty sequence"),
        ("max_replay_size", 10, r"max_replay_size \(10\) must be >= min_replay_size"),
        ("optimizer", "sgd", "optimizer must be one of adam, rmsprop, got 'sgd'"),
        ("rmsprop_decay", 1.0, r"rmsprop_decay must be in \(0, 1\)"),
    ],
)
def test_invalid_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        dqn.DQNConfig(**{field: value})


def test_rmsprop_is_centred_with_its_epsilon_outside_the_root():
    """``optimizer="rmsprop"`` takes PyTorch's ``RMSprop(centered=True)`` steps (MinAtar's DQN's), written out here."""
    from acme.agents.q_learning import q_learning_optimizer

    config = dqn.DQNConfig(optimizer="rmsprop", learning_rate=0.1, rmsprop_decay=0.9, rmsprop_eps=0.01)
    optimizer = q_learning_optimizer(config)
    params = np.array([1.0, -2.0], np.float32)
    state = optimizer.init(params)
    mean, square, expected = np.zeros(2), np.zeros(2), params.astype(np.float64)
    for gradient in ([0.5, 0.001], [-0.2, 0.003], [0.4, -0.002]):
        gradient = np.array(gradient)
        mean = 0.9 * mean + 0.1 * gradient
        square = 0.9 * square + 0.1 * gradient**2
        expected = expected - 0.1 * gradient / (np.sqrt(square - mean**2) + 0.01)
        updates, state = optimizer.update(gradient.astype(np.float32), state, params)
        params = params + updates
    np.testing.assert_allclose(params, expected, rtol=1e-5)


def test_config_is_frozen():
    config = dqn.DQNConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.learning_rate = 1.0  # type: ignore[misc]


def test_networks_need_discrete_actions():
    with pytest.raises(ValueError, match="discrete action space"):
        dqn.make_networks(fakes.continuous_spec())


def test_mismatched_networks_and_environment_are_explained():
    networks = dqn.make_networks(fakes.discrete_spec(num_actions=3), hidden_sizes=(8,))
    builder = dqn.DQNBuilder()
    with pytest.raises(ValueError, match="3 outputs but the environment has 2 actions"):
        builder.make_policy(networks, fakes.discrete_spec(num_actions=2))
    other_obs = dqn.make_networks(fakes.discrete_spec(obs_shape=(5,), num_actions=2), hidden_sizes=(8,))
    with pytest.raises(ValueError, match="expects observations of shape"):
        builder.make_policy(other_obs, fakes.discrete_spec(obs_shape=(4,), num_actions=2))


def _fixed_batch(spec: specs.EnvironmentSpec, batch_size: int = 32) -> ReplaySample:
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(batch_size, 4)).astype(np.float32)
    data = types.Transition(
        observation=obs,
        action=rng.integers(0, 2, size=batch_size).astype(np.int32),
        reward=rng.normal(size=batch_size).astype(np.float32),
        discount=np.full(batch_size, 0.9, np.float32),
        next_observation=rng.normal(size=(batch_size, 4)).astype(np.float32),
    )
    info = SampleInfo(
        key=np.arange(batch_size, dtype=np.uint64),
        probability=np.full(batch_size, 1.0 / batch_size),
        table_size=np.full(batch_size, batch_size, np.int64),
        priority=np.ones(batch_size),
        times_sampled=np.ones(batch_size, np.int32),
    )
    return ReplaySample(info=info, data=data)


class ListLogger(loggers.Logger):
    def __init__(self):
        self.rows = []

    def write(self, data):
        self.rows.append(loggers.to_scalars(data))


def test_learner_loss_decreases_on_a_fixed_batch():
    spec = fakes.discrete_spec()
    batch = _fixed_batch(spec)
    config = dqn.DQNConfig(
        learning_rate=1e-3, target_update_period=1000, hidden_sizes=(32, 32), num_sgd_steps_per_step=1
    )
    logger = ListLogger()
    learner = dqn.DQN_LEARNER.make_learner(
        dqn.make_networks(spec, config.hidden_sizes),
        config,
        jax.random.PRNGKey(0),
        iterator=itertools.repeat(batch),
        logger=logger,
        log_every_seconds=0.0,
    )
    before = jax.tree.map(np.array, learner.get_variables(["policy"])[0])
    learner.run(num_steps=200)
    losses = [row["loss"] for row in logger.rows]
    assert len(losses) == 200 and all(np.isfinite(losses))
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    after = learner.get_variables(["policy"])[0]
    changed = jax.tree.map(lambda a, b: not np.allclose(a, b), before, after)
    assert all(jax.tree.leaves(changed))
    assert learner.num_steps == 200
    assert logger.rows[-1]["learner_steps"] == 200  # the learner's own counter


def test_learner_reports_nan_loss_clearly():
    spec = fakes.discrete_spec()
    batch = _fixed_batch(spec)
    batch = batch._replace(data=batch.data._replace(reward=np.full(32, np.nan, np.float32)))
    learner = dqn.DQN_LEARNER.make_learner(
        dqn.make_networks(spec, (8,)),
        dqn.DQNConfig(num_sgd_steps_per_step=1),
        jax.random.PRNGKey(0),
        iterator=itertools.repeat(batch),
    )
    with pytest.raises(FloatingPointError, match="DQN loss became nan at learner step 1"):
        learner.step()


def test_learner_save_restore_round_trip():
    spec = fakes.discrete_spec()
    batch = _fixed_batch(spec)
    config = dqn.DQNConfig(hidden_sizes=(16,), num_sgd_steps_per_step=1)  # one [B] batch per step
    make = lambda seed: dqn.DQN_LEARNER.make_learner(  # noqa: E731
        dqn.make_networks(spec, config.hidden_sizes), config, jax.random.PRNGKey(seed), iterator=itertools.repeat(batch)
    )
    learner = make(0)
    learner.run(num_steps=5)
    other = make(1)
    other.restore(learner.save())
    for a, b in zip(jax.tree.leaves(learner.save()), jax.tree.leaves(other.save())):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert other.num_steps == 5


@pytest.mark.parametrize("prioritized, fused", [(False, 1), (True, 1), (True, 2)])
def test_builder_runs_end_to_end_on_a_fake_environment(prioritized, fused):
    config = dqn.DQNConfig(
        hidden_sizes=(16,),
        batch_size=8 // fused,
        min_replay_size=20,
        samples_per_insert=4.0 / fused,
        prioritized_replay=prioritized,
        epsilon_decay_steps=50,
        num_sgd_steps_per_step=fused,
    )
    spec = fakes.discrete_spec()
    experiment = ExperimentConfig(
        builder=dqn.DQNBuilder(config),
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=20),
        network_factory=lambda s: dqn.make_networks(s, config.hidden_sizes),
        seed=0,
        max_num_actor_steps=300,
        eval_every=100,
        num_eval_episodes=2,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 300
    # samples_per_insert 4 at batch 8: one learner step per two inserted transitions after the first 20
    # (140), give or take the limiter's error buffer of 32 inserts (16 learner steps). Fused: two updates
    # of batch 4 per [2, 4] stack, the same number of updates.
    assert 124 <= result.learner_steps <= 156
    assert [e.actor_steps for e in result.evaluations] == [100, 200, 300]
    assert all(e.mean_return == pytest.approx(210.0) for e in result.evaluations)  # rewards 1..20


def _local_replay(table_specs):
    return LocalReplay(table_specs), lambda: None


def _reverb_replay(table_specs):
    import reverb

    from acme.replay.reverb_tables import to_reverb_tables
    from launch.reverb_server import start_reverb_server

    server = start_reverb_server(to_reverb_tables(table_specs))
    return reverb.Client(f"localhost:{server.port}"), server.stop


@pytest.mark.parametrize(
    "make_replay", [_local_replay, pytest.param(_reverb_replay, marks=pytest.mark.reverb)], ids=["local", "reverb"]
)
def test_actor_recovers_from_an_episode_cut_short(make_replay):
    """An episode cut short (a loop stopped mid-episode) and a new loop with the same actor: the adder drops the
    cut episode's unfinished items and writes the new episodes' as usual."""
    from acme.environment_loop import EnvironmentLoop

    config = dqn.DQNConfig(hidden_sizes=(8,), min_replay_size=1, samples_per_insert=1.0)
    spec = fakes.discrete_spec()
    builder = dqn.DQNBuilder(config)
    networks = dqn.make_networks(spec, config.hidden_sizes)
    client, stop = make_replay(builder.make_replay_tables(spec))
    try:
        learner_like = _StaticSource(networks.init(jax.random.PRNGKey(0)))
        actor = builder.make_actor(
            [jax.random.PRNGKey(1)],
            builder.make_policy(networks, spec),
            spec,
            variable_source=learner_like,
            adders=[builder.make_adder(client, spec)],
        )

        def loop():
            environment = fakes.FakeEnvironment(spec, episode_length=10)
            return EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False)

        assert loop().run(5) == []  # cut mid-episode
        assert [row["episode_length"] for row in loop().run_episodes(1)] == [10]
        actor._adders[0].flush()
        # 10 transitions from the whole episode, plus the first 5 - 3 + 1 = 3 complete ones of the cut episode.
        assert client.server_info()[config.replay_table_name].current_size == 13
    finally:
        stop()


class _StaticSource:
    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def test_distributed_actors_get_a_spread_of_epsilons():
    builder = dqn.DQNBuilder(dqn.DQNConfig())
    epsilons = [builder.for_actor(i, 4).config.epsilon_end for i in range(4)]
    assert epsilons[0] == pytest.approx(0.4)
    assert epsilons[-1] == pytest.approx(0.4**8)
    assert epsilons == sorted(epsilons, reverse=True)
    assert builder.for_actor(0, 1) is builder
    fixed = dqn.DQNBuilder(dqn.DQNConfig(actor_epsilon_base=None))
    assert fixed.for_actor(3, 4).config.epsilon_end == 0.05


def test_a_builder_takes_only_its_own_config_and_defaults_without_one():
    from acme.agents.transition_builder import NStepTransitionBuilder
    from agents import sac

    assert dqn.DQNBuilder().config == dqn.DQNConfig()
    with pytest.raises(TypeError, match="DQNBuilder takes a DQNConfig, got a SACConfig"):
        dqn.DQNBuilder(sac.SACConfig())

    class NoDefault(NStepTransitionBuilder):
        make_learner = make_policy = None  # only the config handling is under test

    with pytest.raises(TypeError, match="NoDefault has no config_class: give it a config"):
        NoDefault()


# ------------------------------------------------------------------ prioritized replay


def _hand_td_errors(networks, params, target_params, data) -> np.ndarray:
    """Double-Q TD errors in numpy: r + d * Q_target(s', argmax_a Q_online(s', a)) - Q_online(s, a)."""
    q = lambda p, obs: np.asarray(networks.q_network.apply(p, obs), np.float64)  # noqa: E731
    q_tm1 = q(params, data.observation)
    next_action = np.argmax(q(params, data.next_observation), axis=-1)
    q_t = q(target_params, data.next_observation)
    rows = np.arange(len(next_action))
    target = data.reward + data.discount * q_t[rows, next_action]
    return target - q_tm1[rows, np.asarray(data.action)]


def _huber(x: np.ndarray, delta: float) -> np.ndarray:
    x = np.abs(x)
    return np.where(x <= delta, 0.5 * x**2, 0.5 * delta**2 + delta * (x - delta))


@pytest.mark.parametrize("uniform", [False, True], ids=["skewed", "uniform"])
def test_prioritized_loss_uses_normalised_importance_weights(uniform):
    """loss = mean_i(w_i huber(td_i)), w_i = (N P(i))^-beta / max_j (N P(j))^-beta over the batch."""
    spec = fakes.discrete_spec()
    batch = _fixed_batch(spec, batch_size=8)
    table_size = 100
    probability = np.full(8, 1.0 / table_size) if uniform else np.array([0.2, 0.1, 0.05, 0.05, 0.02, 0.01, 0.01, 0.005])
    batch = batch._replace(
        data=batch.data._replace(reward=3.0 * batch.data.reward),  # TD errors on both sides of the Huber delta
        info=batch.info._replace(probability=probability, table_size=np.full(8, table_size, np.int64)),
    )
    config = dqn.DQNConfig(
        hidden_sizes=(16,),
        prioritized_replay=True,
        importance_sampling_exponent=0.4,
        huber_loss_delta=1.0,
        num_sgd_steps_per_step=1,
    )
    networks = dqn.make_networks(spec, config.hidden_sizes)
    logger, written = ListLogger(), []
    learner = dqn.DQN_LEARNER.make_learner(
        networks,
        config,
        jax.random.PRNGKey(0),
        iterator=itertools.repeat(batch),
        logger=logger,
        log_every_seconds=0.0,
        on_priorities=lambda sample, priorities: written.append(priorities),
    )
    params, target_params = learner.get_variables(["params", "target_params"])
    learner.step()

    td = _hand_td_errors(networks, params, target_params, batch.data)
    assert np.any(np.abs(td) > 1.0) and np.any(np.abs(td) < 1.0)
    weights = (table_size * probability) ** -0.4
    weights = weights / weights.max()
    if uniform:
        np.testing.assert_allclose(weights, 1.0)
    else:
        assert weights.min() < 0.3  # the most likely item counts least
    huber = _huber(td, config.huber_loss_delta)
    assert logger.rows[0]["loss"] == pytest.approx(np.mean(weights * huber), rel=1e-5)
    if not uniform:
        assert abs(logger.rows[0]["loss"] - np.mean(huber)) > 0.05  # unweighted would be detectably different
    # The new priorities handed back are |td| (the table raises them to its exponent when sampling).
    assert len(written) == 1
    np.testing.assert_allclose(written[0], np.abs(td), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fused", [1, 2])
def test_learner_writes_new_priorities_to_the_local_table(fused):
    """After a step, the sampled items' priorities are |td| and the next samples are drawn by |td|^exponent."""
    spec = fakes.discrete_spec()
    config = dqn.DQNConfig(
        hidden_sizes=(16,),
        prioritized_replay=True,
        priority_exponent=0.5,
        batch_size=6,
        min_replay_size=12,
        max_replay_size=100,
        samples_per_insert=4.0,
        num_sgd_steps_per_step=fused,
    )
    builder = dqn.DQNBuilder(config)
    networks = dqn.make_networks(spec, config.hidden_sizes)
    client = LocalReplay(builder.make_replay_tables(spec))
    table = client.table(config.replay_table_name)
    rng = np.random.default_rng(0)
    for _ in range(12):
        item = types.Transition(
            observation=rng.normal(size=4).astype(np.float32),
            action=np.int32(rng.integers(0, 2)),
            reward=np.float32(3.0 * rng.normal()),
            discount=np.float32(0.9),
            next_observation=rng.normal(size=4).astype(np.float32),
            extras=(),
        )
        client.insert(item, {config.replay_table_name: 1.0})

    samples = []

    def recorded(iterator):
        for sample in iterator:
            samples.append(sample)
            yield sample

    learner = builder.make_learner(
        jax.random.PRNGKey(0),
        networks,
        recorded(builder.make_dataset_iterator(client)),
        lambda label, steps_key=None: loggers.NoOpLogger(),
        spec,
        replay_client=client,
    )
    initial_state = dqn.DQN_LEARNER.make_initial_state(networks, config, jax.random.PRNGKey(0))
    learner.step()
    (sample,) = samples
    assert np.shape(sample.info.key) == ((config.batch_size,) if fused == 1 else (fused, config.batch_size))

    # Each of the U updates' TD errors, under the parameters that update started from.
    update = dqn.DQN_LEARNER.make_update(networks, config)
    state, expected = initial_state, {}
    for u in range(fused):
        part = sample if fused == 1 else jax.tree.map(lambda x: x[u], sample)
        td = _hand_td_errors(networks, state.params, state.target_params, part.data)
        for key, error in zip(part.info.key.tolist(), np.abs(td)):
            expected[key] = error  # an item drawn again later takes its later priority
        if u + 1 < fused:
            state, _ = update(state, (part.data, part.info.probability))

    saved = table.save()
    priorities = dict(zip(saved["keys"].tolist(), saved["priorities"]))
    assert len(priorities) == 12
    for key, priority in priorities.items():
        if key in expected:
            assert priority == pytest.approx(expected[key], rel=1e-5, abs=1e-6), key
        else:
            assert priority == 1.0, key  # not sampled: as inserted
    assert any(abs(expected[k] - 1.0) > 0.1 for k in expected)

    # The next draw has P(i) = p_i^alpha / sum_j p_j^alpha.
    total = sum(p**0.5 for p in priorities.values())
    again = table.sample(8)
    for key, probability in zip(again.info.key.tolist(), again.info.probability):
        assert probability == pytest.approx(priorities[key] ** 0.5 / total, rel=1e-9)
    np.testing.assert_allclose(again.info.priority, [priorities[k] for k in again.info.key.tolist()])
