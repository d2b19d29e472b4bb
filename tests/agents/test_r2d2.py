"""R2D2: value rescaling, mixed priorities, stored recurrent state, burn-in, a learner step, end to end, snapshots."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax

from acme.environment_loop import EnvironmentLoop
from acme.experiments import ExperimentConfig, run_experiment
from acme.replay.local import ReplaySample
from acme.replay.local_client import LocalBatches, LocalReplay
from acme.testing import fakes
from acme.utils import loggers
from agents.r2d2 import R2D2Builder, R2D2Config, make_networks
from agents.r2d2.learning import mixed_priorities, sequence_td_errors
from baselines.policy_export import evaluate_snapshot, export_policy

SPEC = fakes.discrete_spec(obs_shape=(3,), num_actions=2)
TINY = dict(
    torso_sizes=(8,),
    lstm_size=4,
    burn_in_length=2,
    trace_length=4,
    sequence_period=3,
    n_step=2,
    batch_size=4,
    min_replay_size=4,
    samples_per_insert=4.0,
)


def _no_logs(label, steps_key=None):
    return loggers.NoOpLogger()


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("burn_in_length", -1, "burn_in_length must be an integer >= 0"),
        ("trace_length", 1, r"trace_length must be >= 2"),
        ("lstm_size", 0, "lstm_size must be an integer >= 1"),
        ("prioritized_replay", False, "prioritized_replay must be True"),
        ("max_priority_weight", 1.5, r"max_priority_weight must be in \[0, 1\]"),
        ("epsilon_end", 2.0, r"epsilon_end must be a probability in \[0, 1\]"),
        ("n_step", 0, "n_step must be an integer >= 1"),
        ("learning_rate_decay_steps", -1, "learning_rate_decay_steps must be an integer >= 0"),
        ("final_learning_rate", 0.0, "final_learning_rate must be"),
    ],
)
def test_invalid_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        R2D2Config(**{field: value})


def test_a_decay_of_the_step_size_must_decay():
    with pytest.raises(ValueError, match=r"final_learning_rate \(0.01\) must be at most learning_rate \(0.001\)"):
        R2D2Config(learning_rate=1e-3, final_learning_rate=1e-2, learning_rate_decay_steps=100)
    R2D2Config(learning_rate=1e-3, final_learning_rate=1e-2)  # no decay: the final step size is not used


def test_value_rescaling_and_its_inverse():
    h, h_inverse = rlax.SIGNED_HYPERBOLIC_PAIR
    # h(x) = sign(x) (sqrt(|x| + 1) - 1) + 1e-3 x
    np.testing.assert_allclose(h(jnp.array([3.0, -8.0, 0.0])), [1.003, -2.008, 0.0], rtol=1e-6)
    x = jnp.array([-500.0, -1.0, 0.0, 0.5, 42.0, 1e4])
    np.testing.assert_allclose(h_inverse(h(x)), x, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "step_discounts, expected",
    [
        # A time limit cut the episode at its final step 4 (discount 1 into it): the last steps bootstrap from the
        # final step's value, 40, however close to it they are.
        ([1, 1, 1, 1, 0, 0], [1 + 0.5 + 0.25 + 0.125 * 30, 1 + 0.5 + 0.25 + 0.125 * 40, 1 + 0.5 + 0.25 * 40, 21]),
        # The episode terminated (discount 0 into the final step): no value after it.
        ([1, 1, 1, 0, 0, 0], [1 + 0.5 + 0.25 + 0.125 * 30, 1.75, 1.5, 1]),
    ],
)
def test_a_return_stops_at_the_final_step_and_bootstraps_from_its_value(step_discounts, expected):
    # Steps 0-3 acted, 4 is the final step, 5 padding; 3-step returns at gamma 0.5; the target network values
    # step t at 10 t, the online network is indifferent (zeros: its greedy action is the first).
    gamma, n_step = 0.5, 3
    target_q = jnp.stack([10.0 * jnp.arange(6), jnp.zeros(6)], axis=-1)
    q, actions = jnp.zeros((6, 2)), jnp.zeros(6, jnp.int32)
    rewards = jnp.array([1.0, 1, 1, 1, 0, 0])
    discounts = gamma * jnp.array(step_discounts, jnp.float32)
    acted = jnp.array([True, True, True, True, False, False])
    td = sequence_td_errors(q, target_q, actions, rewards, discounts, acted, n_step, rlax.IDENTITY_PAIR)
    np.testing.assert_allclose(td[:4], expected, rtol=1e-6)
    # rlax's n-step Q-learning alone runs the window into the zero padding: the time-limited episode's last step
    # would be worth its reward only.
    plain = rlax.transformed_n_step_q_learning(
        q[:-1], actions[:-1], target_q[1:], actions[1:], rewards[:-1], discounts[:-1], n_step
    )
    assert float(plain[3]) == 1.0


def test_mixed_priorities_weigh_the_max_and_the_mean_of_the_acted_steps():
    abs_td = jnp.array([[1.0, 3.0, 100.0], [2.0, 2.0, 2.0]])
    mask = jnp.array([[True, True, False], [True, True, True]])  # 100 is on a step not acted on
    np.testing.assert_allclose(mixed_priorities(abs_td, mask, 0.9), [0.9 * 3 + 0.1 * 2, 2.0], rtol=1e-6)


def _parts(**overrides):
    config = R2D2Config(**{**TINY, **overrides})
    return config, R2D2Builder(config), make_networks(SPEC, config.torso_sizes, config.lstm_size)


def _stored_sequences(steps: int = 24):
    config, builder, networks = _parts()
    replay = LocalReplay(builder.make_replay_tables(SPEC), wait_on_insert=False)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), _no_logs, SPEC, replay)
    actor = builder.make_actor(
        [jax.random.PRNGKey(1)], builder.make_policy(networks, SPEC), SPEC, learner, [builder.make_adder(replay, SPEC)]
    )
    environment = fakes.FakeEnvironment(SPEC, episode_length=8)
    EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(steps)
    table = replay.table(config.replay_table_name)
    return table.sample(len(table)).data, networks, learner.get_variables(["policy"])[0]


def test_sequences_carry_the_recurrent_state_the_actor_acted_from():
    sequences, networks, params = _stored_sequences()
    # 3 episodes of 8 steps (9 with the final one); items of 6 steps start at 0, 3 and 6 (padded): 9 items.
    assert sequences.reward.shape == (9, 6)
    core = sequences.extras["core_state"]
    observations = np.asarray(sequences.observation)
    for i in range(9):
        start = int(observations[i, 0, 0])  # the fake environment's observation is the step's index
        state = networks.initial_state(params, 1)
        if start:
            # Unroll the network over the episode's first `start` observations (each filled with its index).
            earlier = jnp.broadcast_to(jnp.arange(start, dtype=jnp.float32)[:, None, None], (start, 1, 3))
            _, state = networks.unroll(params, earlier, state)
        np.testing.assert_allclose(core["hidden"][i, 0], state.hidden[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(core["cell"][i, 0], state.cell[0], rtol=1e-5, atol=1e-6)


def test_acted_marks_real_steps_only():
    sequences, _, _ = _stored_sequences()
    acted = np.asarray(sequences.extras["acted"])
    steps = np.asarray(sequences.observation)[..., 0]
    # Step indices 0..7 were acted on; 8 is the final step, and padding (zeros after it) was not.
    padding = np.zeros_like(acted)
    padding[:, 1:] = steps[:, 1:] == 0
    np.testing.assert_array_equal(acted, (steps < 8) & ~padding)


def _learner_on(sequences, **overrides):
    config, builder, networks = _parts(**overrides)
    probabilities = np.full(len(sequences.reward), 0.1, np.float32)
    info = dataclasses.make_dataclass("Info", ["key", "probability"])(np.arange(len(probabilities)), probabilities)
    sample = ReplaySample(info, sequences)
    return builder.make_learner(jax.random.PRNGKey(0), networks, iter(lambda: sample, None), _no_logs, SPEC)


def _priorities_after_a_step(sequences, **overrides) -> np.ndarray:
    seen = {}
    learner = _learner_on(sequences, **overrides)
    learner._on_priorities = lambda sample, priorities: seen.setdefault("p", priorities)
    learner.step()
    learner.check_finite()
    return seen["p"]


def test_burn_in_steps_warm_the_state_and_carry_no_loss_unless_asked_at_an_episode_start():
    sequences, _, _ = _stored_sequences()
    starts = np.asarray(sequences.start_of_episode)[:, 0]
    assert 0 < starts.sum() < len(starts)  # items start at steps 0, 3 and 6 of each episode
    # Other rewards and actions in the burn-in steps (the first 2): the same TD errors, except, with
    # learn_burn_in_at_episode_start, where the sequence began its episode (its state is the reset one, never stale).
    changed = sequences._replace(reward=np.asarray(sequences.reward).copy(), action=np.asarray(sequences.action).copy())
    changed.reward[:, :2] += 5.0
    changed.action[:, :2] = 1 - changed.action[:, :2]
    base = _priorities_after_a_step(sequences)
    np.testing.assert_allclose(_priorities_after_a_step(changed), base, rtol=1e-6)
    learned = dict(learn_burn_in_at_episode_start=True)
    base_learned = _priorities_after_a_step(sequences, **learned)
    after = _priorities_after_a_step(changed, **learned)
    np.testing.assert_allclose(base_learned[~starts], base[~starts], rtol=1e-6)
    np.testing.assert_allclose(after[~starts], base[~starts], rtol=1e-6)
    assert np.all(np.abs(after[starts] - base_learned[starts]) > 1e-3)
    # Other observations in the burn-in steps change the warmed-up state, hence the TD errors.
    warmed = sequences._replace(observation=np.asarray(sequences.observation).copy())
    warmed.observation[:, :2] += 3.0
    assert not np.allclose(_priorities_after_a_step(warmed), base)


def test_one_learner_step_changes_the_parameters_and_writes_priorities_back():
    config, builder, networks = _parts()
    replay = LocalReplay(builder.make_replay_tables(SPEC), wait_on_insert=False)
    table = replay.table(config.replay_table_name)
    dataset = LocalBatches(table, config.batch_size)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, dataset, _no_logs, SPEC, replay)
    actor = builder.make_actor(
        [jax.random.PRNGKey(1)], builder.make_policy(networks, SPEC), SPEC, learner, [builder.make_adder(replay, SPEC)]
    )
    EnvironmentLoop(fakes.FakeEnvironment(SPEC, episode_length=8), actor, logger=loggers.NoOpLogger()).run(24)
    before = jax.tree.leaves(jax.device_get(learner.state.params))
    learner.step()
    learner.check_finite()
    after = jax.tree.leaves(jax.device_get(learner.state.params))
    assert any(not np.allclose(a, b) for a, b in zip(before, after))
    priorities = table.sample(len(table)).info.priority
    assert np.sum(priorities != 1.0) >= 1  # the sampled sequences' priorities were rewritten


def test_builder_runs_end_to_end_and_refuses_several_environments_per_actor():
    config, builder, _ = _parts()
    experiment = ExperimentConfig(
        builder=builder,
        environment_factory=lambda seed: fakes.FakeEnvironment(SPEC, episode_length=10),
        network_factory=lambda s: make_networks(s, config.torso_sizes, config.lstm_size),
        seed=0,
        max_num_actor_steps=100,
        eval_every=50,
        num_eval_episodes=2,
        logger_factory=_no_logs,
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 100 and result.learner_steps > 0
    assert all(e.mean_return == pytest.approx(55.0) for e in result.evaluations)  # rewards 1..10
    with pytest.raises(NotImplementedError, match="use num_envs_per_actor=1"):
        run_experiment(dataclasses.replace(experiment, num_envs_per_actor=2), progress=False)


def test_distributed_actors_get_a_spread_of_epsilons():
    _, builder, _ = _parts()
    epsilons = [builder.for_actor(i, 4).config.epsilon_end for i in range(4)]
    assert epsilons[0] == pytest.approx(0.4) and epsilons[-1] == pytest.approx(0.4**8)
    assert epsilons == sorted(epsilons, reverse=True)


def test_a_recurrent_snapshot_evaluates(tmp_path):
    config, builder, networks = _parts()
    from acme import specs
    from acme.environments import make_environment

    spec = specs.make_environment_spec(make_environment("gymnasium:CartPole-v1", seed=0))
    networks = make_networks(spec, config.torso_sizes, config.lstm_size)
    params = networks.init_params(jax.random.PRNGKey(0))
    export_policy(str(tmp_path / "policy"), "r2d2", "gymnasium:CartPole-v1", config, params)
    returns = evaluate_snapshot(str(tmp_path / "policy"), episodes=2, seed=0)
    assert len(returns) == 2 and all(1 <= r <= 500 for r in returns)
    assert evaluate_snapshot(str(tmp_path / "policy"), episodes=2, seed=0) == returns
