"""The on-device loop stores what the host adders write: the same n-step transitions, the same rollout rows."""

from __future__ import annotations

import re

import dm_env
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import adders, specs
from acme.adders.base import Step
from acme.anakin import sequences
from acme.anakin import transitions as nstep
from acme.anakin.loop import AnakinAgent
from acme.anakin.replay import DeviceReplay
from acme.environments.jax_native import LAST, CartPole
from acme.replay import tables
from acme.replay.local_client import LocalReplay
from tests.adders.helpers import read_all


def _random_trajectory(environment, num_steps: int, seed: int):
    """Timesteps ``[num_steps + 1]`` and actions ``[num_steps]`` of random play (automatic resets included)."""
    key = jax.random.PRNGKey(seed)
    state, first = environment.reset(key)
    actions = jax.random.randint(jax.random.PRNGKey(seed + 1), (num_steps,), 0, 2)

    def one(state, action):
        state, timestep = environment.step(state, action)
        return state, timestep

    _, timesteps = jax.lax.scan(one, state, actions)
    timesteps = jax.tree.map(lambda f, rest: jnp.concatenate([f[None], rest]), first, timesteps)
    return jax.device_get(timesteps), np.asarray(actions)


def _dm_env_timestep(timesteps, t) -> dm_env.TimeStep:
    return dm_env.TimeStep(
        dm_env.StepType(int(timesteps.step_type[t])),
        np.float32(timesteps.reward[t]),
        np.float32(timesteps.discount[t]),
        np.asarray(timesteps.observation[t]),
    )


def _host_transitions(timesteps, actions, n_step, gamma, spec):
    signature = adders.NStepTransitionAdder.signature(spec)
    client = LocalReplay([tables.TableSpec.queue("t", 100_000, signature)])
    adder = adders.NStepTransitionAdder(client, n_step, gamma, {"t": None})
    for t in range(len(actions) + 1):
        timestep = _dm_env_timestep(timesteps, t)
        if timestep.first():
            adder.add_first(timestep)
        else:
            adder.add(np.int32(actions[t - 1]), timestep)
    return [sample.data for sample in read_all(client, "t")]


@pytest.mark.parametrize("n_step,gamma", [(1, 0.99), (3, 0.9), (7, 0.95)])
def test_n_step_transitions_are_the_host_adders_at_terminations_and_truncations(n_step, gamma):
    environment = CartPole(max_episode_steps=12)  # random play both terminates (~20 steps) and truncates here
    timesteps, actions = _random_trajectory(environment, 600, seed=n_step)
    spec = environment.spec()
    expected = _host_transitions(timesteps, actions, n_step, gamma, spec)

    window = nstep.init_window(n_step, timesteps.observation[0], np.int32(0))
    add = jax.jit(lambda w, ts, a, nts: nstep.add_step(w, ts, a, nts, gamma))
    made = []
    for t in range(len(actions)):
        now, after = (jax.tree.map(lambda x, i=i: x[i], timesteps) for i in (t, t + 1))
        window, candidates, complete = add(window, now, np.int32(actions[t]), after)
        for j in np.flatnonzero(np.asarray(complete)):
            made.append(jax.tree.map(lambda x, j=j: np.asarray(x[j]), candidates))
    ended = [t for t in range(len(actions)) if timesteps.step_type[t + 1] == LAST]
    assert len(ended) > 20 and any(timesteps.discount[t + 1] == 1.0 for t in ended), "needs truncations too"
    assert any(timesteps.discount[t + 1] == 0.0 for t in ended), "needs terminations too"
    assert len(made) == len(expected) > 400
    for ours, host in zip(made, expected):
        np.testing.assert_allclose(ours.observation, host.observation)
        np.testing.assert_array_equal(ours.action, host.action)
        np.testing.assert_allclose(ours.reward, host.reward, rtol=1e-6)
        np.testing.assert_allclose(ours.discount, host.discount, rtol=1e-6)
        np.testing.assert_allclose(ours.next_observation, host.next_observation)


def _stream(environment, agent, num_iterations):
    """The rows the agent's iterations hand its update, per environment, joined by their shared steps."""
    captured = []

    def batch(sample):  # the rows handed out of the compiled iteration as it runs (op by op it took 5-15 s)
        jax.debug.callback(lambda data: captured.append(jax.tree.map(np.array, data)), sample.data, ordered=True)
        return sample.data

    agent._batch_fn = batch
    iterate = jax.jit(agent.iterate)
    carry = agent.init(jax.random.PRNGKey(5))
    for _ in range(num_iterations):
        carry, _ = iterate(carry)
    jax.effects_barrier()
    assert len(captured) == num_iterations, len(captured)
    return captured


def _rollout_agent(name: str, environment):
    """PPO, or IMPALA or PPO with an LSTM (``..._lstm``: its state carried through the scan, reset at episode
    starts, stored)."""
    from baselines import registry

    recurrent = name.endswith("_lstm")
    entry = registry.get_agent(name.removesuffix("_lstm"))
    overrides = (
        dict(unroll_length=4, batch_size=1)
        | (dict(num_epochs=1) if name.startswith("ppo") else {})
        | (dict(lstm_size=4, hidden_sizes=(8,), learning_rate=1e-30) if recurrent else {})
    )  # the recurrent agents' step size leaves their parameters as they were: the states are recomputed below
    config = entry.make_config(**overrides)
    builder = entry.make_builder(config)
    networks = entry.make_networks(environment.spec(), config)
    return AnakinAgent(builder, networks, environment, 1), builder, networks, config


@pytest.mark.parametrize("name", ["ppo", "impala_lstm", "ppo_lstm"])
def test_consecutive_rollouts_share_their_boundary_step_and_match_the_host_adder(name):
    environment = CartPole(max_episode_steps=7)
    agent, builder, networks, config = _rollout_agent(name, environment)
    batches = _stream(environment, agent, 6)
    stream = [jax.tree.map(lambda x: x[0], batches[0])]  # environment 0, [T + 1]
    for batch in batches[1:]:
        rollout = jax.tree.map(lambda x: x[0], batch)
        np.testing.assert_array_equal(rollout.observation[0], stream[-1].observation[-1])
        assert rollout.start_of_episode[0] == stream[-1].start_of_episode[-1]
        stream.append(rollout)
    # Rebuild the timesteps the stream came from and replay them into the host SequenceAdder.
    rows = jax.tree.map(lambda *xs: np.concatenate([x[:-1] for x in xs] + [xs[-1][-1:]]), *stream)
    spec = environment.spec()
    extras_spec = builder.extras_spec(spec)
    signature = adders.SequenceAdder.signature(spec, 5, extras_spec)
    client = LocalReplay([tables.TableSpec.queue("q", 1000, signature)])
    adder = adders.SequenceAdder(
        client,
        sequence_length=5,
        period=4,
        priority_fns={"q": None},
        pad_end_of_episode=False,
        break_end_of_episode=False,
    )
    num_rows = len(rows.reward)
    for t in range(num_rows - 1):
        observation = rows.observation[t]
        if rows.start_of_episode[t]:
            adder.add_first(dm_env.restart(observation))
        final = rows.start_of_episode[t + 1]
        if final:
            continue  # the final step's row is written by the add that ended the episode
        next_final = t + 2 < num_rows and rows.start_of_episode[t + 2]
        following = rows.observation[t + 1]
        step_type = dm_env.StepType.LAST if next_final else dm_env.StepType.MID
        extras = jax.tree.map(lambda x: x[t], rows.extras)
        adder.add(
            rows.action[t], dm_env.TimeStep(step_type, rows.reward[t], rows.discount[t], following), extras=extras
        )
    host = [sample.data for sample in read_all(client, "q")]
    assert len(host) >= len(stream) - 2
    for ours, theirs in zip(stream, host):
        for name in ("observation", "start_of_episode"):
            np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
        for field in ("action", "reward", "discount"):  # the last row's are filled by the next rollout
            np.testing.assert_array_equal(getattr(ours, field)[:-1], getattr(theirs, field)[:-1])
        for a, b in zip(jax.tree.leaves(ours.extras), jax.tree.leaves(theirs.extras)):
            np.testing.assert_array_equal(a[:-1], b[:-1])
    if name.endswith("_lstm"):  # each stored state is the one the network reaches from its episode's start
        carry = agent.init(jax.random.PRNGKey(5))  # the parameters the stream acted with (no learning under test)
        params = agent._policy_params(carry.learner)
        state, compared = None, 0
        for t in range(num_rows - 1):
            if rows.start_of_episode[t]:
                state = networks.initial_state(params[0], 1)
            if t + 1 < num_rows and rows.start_of_episode[t + 1]:
                continue  # a final step: no action, no state stored
            stored = rows.extras["core_state"]
            np.testing.assert_allclose(stored["hidden"][t], np.asarray(state.hidden[0]), atol=1e-6)
            np.testing.assert_allclose(stored["cell"][t], np.asarray(state.cell[0]), atol=1e-6)
            observation = jnp.asarray(rows.observation[t])[None]
            _, state = networks.step(params[0], observation, state)
            compared += 1
        assert compared >= 15 and rows.start_of_episode[1:].sum() >= 2, compared  # over several episodes


def test_device_replay_keeps_the_newest_valid_items_in_order_and_samples_by_priority():
    replay = DeviceReplay(capacity=5, priority_exponent=1.0)
    state = replay.init({"x": jnp.zeros((), jnp.int32)})
    state = replay.insert(state, {"x": jnp.arange(4)}, jnp.array([True, False, True, True]))
    assert int(state.size) == 3
    state = replay.insert(state, {"x": jnp.arange(10, 14)}, jnp.array([True, True, True, True]))
    assert int(state.size) == 5
    assert sorted(np.asarray(state.items["x"]).tolist()) == [3, 10, 11, 12, 13]  # 0 and 2 were the oldest
    state = replay.insert(state, {"x": jnp.arange(20, 28)}, jnp.ones(8, bool))  # more than capacity at once
    assert sorted(np.asarray(state.items["x"]).tolist()) == [23, 24, 25, 26, 27]
    slots = jnp.arange(5)
    state = replay.update_priorities(state, slots, jnp.where(state.items["x"] == 25, 1.0, 0.0))
    sample = replay.sample(state, jax.random.PRNGKey(0), (64,))
    assert np.all(np.asarray(sample.data["x"]) == 25)
    np.testing.assert_allclose(sample.info.probability, 1.0)
    state = replay.update_priorities(state, slots, jnp.array([1.0, 1.0, 2.0, 0.0, 0.0]))
    draws = np.asarray(replay.sample(state, jax.random.PRNGKey(1), (20_000,)).info.key)
    np.testing.assert_allclose(np.bincount(draws, minlength=5) / 20_000, [0.25, 0.25, 0.5, 0, 0], atol=0.02)
    uniform = DeviceReplay(capacity=5)
    state = uniform.insert(uniform.init({"x": jnp.zeros(())}), {"x": jnp.arange(2.0)}, jnp.ones(2, bool))
    draws = np.asarray(uniform.sample(state, jax.random.PRNGKey(2), (1000,)).data["x"])
    assert set(draws.tolist()) == {0.0, 1.0}


@pytest.mark.parametrize("num_seeds", [1, 2])  # one agent's program is not vmapped, several agents' is
def test_an_iteration_writes_the_replay_in_place_without_copying_it(num_seeds):
    """The compiled chunk of a transition agent holds no copy of a replay buffer: with one, every iteration copied
    the whole replay (XLA fused the insert into the sample's gather), 1.7x slower for SAC with 1M items."""
    from acme.anakin.runner import AnakinAgents
    from acme.experiments import RunOptions
    from baselines import registry

    capacity = 12_347  # a size no other array of the program has
    overrides = dict(
        policy_hidden_sizes=(8,),
        critic_hidden_sizes=(8,),
        batch_size=16,
        samples_per_insert=16.0,
        min_replay_size=32,
        max_replay_size=capacity,
    )
    config = registry.make_experiment_config("sac", "jax:Pendulum-v1", max_steps=1_000, config_overrides=overrides)
    agents = AnakinAgents(config, RunOptions(launcher="anakin", num_seeds=num_seeds))
    carry = jax.eval_shape(agents.init, jnp.zeros((num_seeds, 2), jnp.uint32), agents.swept)
    program = agents.chunk.lower(carry, agents.swept, 4).compile().as_text()
    buffers = [line for line in program.splitlines() if re.search(rf"[\[,]{capacity}[\],]", line)]
    assert buffers, "the replay's buffers are not in the program"
    copies = [line.strip()[:160] for line in buffers if " copy(" in line]
    assert not copies, copies


def _host_sequences(timesteps, actions, extras, length, period, spec):
    extras_spec = jax.tree.map(lambda x: specs.Array(np.shape(x)[1:], np.asarray(x).dtype), extras)
    signature = adders.SequenceAdder.signature(spec, length, extras_spec)
    client = LocalReplay([tables.TableSpec.queue("q", 100_000, signature)])
    adder = adders.SequenceAdder(client, length, period, {"q": None}, pad_end_of_episode=True)
    for t in range(len(actions) + 1):
        timestep = _dm_env_timestep(timesteps, t)
        if timestep.first():
            adder.add_first(timestep)
        else:
            adder.add(np.int32(actions[t - 1]), timestep, extras=jax.tree.map(lambda x, t=t: x[t - 1], extras))
    return [sample.data for sample in read_all(client, "q")]


@pytest.mark.parametrize("length,period", [(5, 3), (4, 4), (3, 5), (1, 1), (8, 2)])
def test_sequences_are_the_host_adders_with_zero_padding_at_episode_ends(length, period):
    # Episodes of 2, 3 and 12 steps, shorter and longer than the items: three random plays cut after their last
    # LAST timestep and joined (the step from a LAST timestep restarts, whatever the action).
    pieces = []
    for max_steps in (12, 3, 12, 2):
        environment = CartPole(max_episode_steps=max_steps)
        timesteps, actions = _random_trajectory(environment, 120, seed=length + period + max_steps)
        end = np.flatnonzero(timesteps.step_type == LAST).max()
        pieces.append((jax.tree.map(lambda x, end=end: x[: end + 1], timesteps), actions[: end + 1]))
    timesteps = jax.tree.map(lambda *xs: np.concatenate(xs), *[p[0] for p in pieces])
    actions = np.concatenate([p[1] for p in pieces])[:-1]
    extras = {"acted": np.ones(len(actions), bool), "index": np.arange(len(actions), dtype=np.float32)}
    expected = _host_sequences(timesteps, actions, extras, length, period, environment.spec())

    now = jax.tree.map(lambda x: x[0], timesteps)
    example = Step(now.observation, np.int32(0), now.reward, now.discount, True, {k: v[0] for k, v in extras.items()})
    window = sequences.init_window(length, example)
    add = jax.jit(lambda w, ts, a, e, nts: sequences.add_step(w, ts, a, e, nts, length, period))
    made = []
    for t in range(len(actions)):
        now, after = (jax.tree.map(lambda x, i=i: x[i], timesteps) for i in (t, t + 1))
        step_extras = {k: v[t] for k, v in extras.items()}
        window, candidates, complete = add(window, now, np.int32(actions[t]), step_extras, after)
        for j in np.flatnonzero(np.asarray(complete)):
            made.append(jax.tree.map(lambda x, j=j: np.asarray(x[j]), candidates))
    assert len(made) == len(expected) > 40
    for ours, host in zip(made, expected):
        for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(host)):
            np.testing.assert_array_equal(a, b)


def test_r2d2_on_the_device_stores_the_sequences_its_host_adders_write_from_the_same_steps():
    """Two environments' steps (actions, the LSTM states acted from) captured as the loop takes them, replayed into
    one host ``SequenceAdder`` each: the device replay holds the same items in the same order."""
    from baselines import registry

    environment = CartPole(max_episode_steps=7)  # items of 6 steps every 3: padded at every episode's end
    entry = registry.get_agent("r2d2")
    config = entry.make_config(
        lstm_size=4, torso_sizes=(8,), burn_in_length=2, trace_length=4, sequence_period=3, batch_size=2,
        samples_per_insert=2.0, num_sgd_steps_per_step=2, min_replay_size=1, max_replay_size=500,
    )  # fmt: skip
    builder = entry.make_builder(config)
    agent = AnakinAgent(builder, entry.make_networks(environment.spec(), config), environment, 2)
    assert agent.steps_per_environment == 3  # 2 sequences an iteration, one every 3 steps of one of 2 environments
    steps = []
    step_environments = agent._step_environments

    def capture(carry, params):
        before = carry.timesteps
        carry, actions, extras = step_environments(carry, params)
        record = (before, actions, extras, carry.timesteps)
        jax.debug.callback(lambda r: steps.append(jax.device_get(r)), record, ordered=True)
        return carry, actions, extras

    agent._step_environments = capture
    carry = agent.init(jax.random.PRNGKey(3))
    iterate = jax.jit(agent.iterate)
    for _ in range(12):
        carry, _ = iterate(carry)
    replay = jax.device_get(carry.storage[1])

    signature = adders.SequenceAdder.signature(environment.spec(), config.sequence_length, builder.extras_spec())
    client = LocalReplay([tables.TableSpec.queue("q", 1000, signature)])
    host = [adders.SequenceAdder(client, 6, 3, {"q": None}, pad_end_of_episode=True) for _ in range(2)]
    for before, actions, extras, after in steps:
        for i, adder in enumerate(host):
            now, following = (jax.tree.map(lambda x, i=i: x[i], t) for t in (before, after))
            if now.step_type == LAST:
                continue  # the step that restarts the environment
            if now.step_type == 0:
                adder.add_first(_dm_env_timestep(jax.tree.map(lambda x: x[None], now), 0))
            adder.add(actions[i], _dm_env_timestep(jax.tree.map(lambda x: x[None], following), 0),
                      extras=jax.tree.map(lambda x, i=i: x[i], extras))  # fmt: skip
    expected = [sample.data for sample in read_all(client, "q")]
    assert int(replay.size) == len(expected) >= 20
    assert sum(bool(item.start_of_episode[0]) for item in expected) >= 4  # several episodes
    assert any(not item.extras["acted"][-1] for item in expected)  # padded ones among them
    for index, theirs in enumerate(expected):
        ours = jax.tree.map(lambda x, index=index: x[index], replay.items)
        for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
            np.testing.assert_array_equal(a, b)
