"""Each JAX library's environments behind the adapter, stepped against the library's own reset and step.

For every library one id is played with random actions, step for step beside the library's own functions fed the
same keys (the keys ``JaxEnvironment.reset`` and ``step`` split): observations and rewards must agree, episodes end
where the library ends them (termination with discount 0; truncation, at the library's time limit, with discount 1)
and the next step starts a new episode from the library's reset.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme.environments import make_environment
from acme.environments.device import make_device_environment
from acme.environments.factory import UnknownEnvironmentError
from acme.environments.jax_native import FIRST, LAST, MID

Reset = Callable[[jax.Array], tuple[Any, Any]]  # key -> (library state, observation)
Step = Callable[[Any, jax.Array, jax.Array], tuple[Any, Any, Any, Any, Any]]  # -> (state, obs, reward, done, discount)


@dataclasses.dataclass(frozen=True)
class Case:
    environment_id: str
    library: Callable[[], tuple[Reset, Step]]
    steps: int
    terminations: bool  # random play must see at least one episode end with discount 0
    truncations: bool  # ... and with discount 1


def _gymnax_style(make):
    """The library's own ``reset_env``/``step_env`` (no automatic reset) of ``make()``'s ``(env, params)``."""

    def library():
        env, params = make()

        def reset(key):
            observation, state = env.reset_env(key, params)
            return state, observation

        def step(state, action, key):
            observation, state, reward, done, info = env.step_env(key, state, action, params)
            return state, observation, reward, done, info["discount"]

        return reset, step

    return library


def _gymnax(name):
    def make():
        import gymnax

        return gymnax.make(name)

    return _gymnax_style(make)


def _craftax(name):
    def make():
        from craftax.craftax_env import make_craftax_env_from_name

        env = make_craftax_env_from_name(name, auto_reset=False)
        return env, env.default_params

    return _gymnax_style(make)


def _brax_style(load, observe=lambda o: o):
    def library():
        env = load()

        def reset(key):
            state = env.reset(key)
            return state, observe(state.obs)

        def step(state, action, key):
            state = env.step(state, action)
            return state, observe(state.obs), state.reward, state.done > 0.5, 1.0 - state.done

        return reset, step

    return library


def _brax(name):
    def load():
        from brax import envs

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return envs.get_environment(name)

    return _brax_style(load)


def _playground(name):
    def load():
        from mujoco_playground import registry

        return registry.load(name, config_overrides={"impl": "jax"})

    return _brax_style(load, lambda o: o["state"] if isinstance(o, dict) else o)


def _jumanji(name):
    def library():
        import jumanji

        env = jumanji.make(name)

        def reset(key):
            state, timestep = env.reset(key)
            return state, timestep.observation._asdict()

        def step(state, action, key):
            state, timestep = env.step(state, action)
            return state, timestep.observation._asdict(), timestep.reward, timestep.last(), timestep.discount

        return reset, step

    return library


def _navix(name):
    def library():
        import navix

        env = navix.make(name)  # the library's default: automatic reset on (never reached: episodes restart here)

        def reset(key):
            timestep = env.reset(key)
            return timestep, timestep.observation

        def step(timestep, action, key):
            timestep = env.step(timestep, action)
            return timestep, timestep.observation, timestep.reward, timestep.step_type > 0, timestep.step_type != 2

        return reset, step

    return library


CASES = [
    Case("gymnax:CartPole-v1", _gymnax("CartPole-v1"), 300, terminations=True, truncations=False),
    Case("gymnax:Pendulum-v1", _gymnax("Pendulum-v1"), 250, terminations=False, truncations=True),
    Case("craftax:Craftax-Classic-Symbolic-v1", _craftax("Craftax-Classic-Symbolic-v1"), 60, False, False),
    Case("brax:inverted_pendulum", _brax("inverted_pendulum"), 150, terminations=True, truncations=False),
    Case("playground:CartpoleSwingup", _playground("CartpoleSwingup"), 1_010, terminations=False, truncations=True),
    Case("jumanji:Snake-v1", _jumanji("Snake-v1"), 200, terminations=True, truncations=False),
    Case("navix:Navix-Empty-5x5-v0", _navix("Navix-Empty-5x5-v0"), 600, terminations=True, truncations=True),
]


def _random_action(spec, key):
    if hasattr(spec, "num_values"):
        return jax.random.randint(key, (), 0, spec.num_values, dtype=spec.dtype)
    return jax.random.uniform(key, spec.shape, spec.dtype, spec.minimum, spec.maximum)


def _assert_same(ours, theirs, what):
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6, err_msg=what),
        ours,
        theirs,
    )


def _strongly_typed(f):
    """``f`` with no weakly typed leaf in what it returns (the same dtypes and values): some libraries' reset and
    step return a state leaf weakly typed in one and not in the other (craftax's ``player_direction``, brax's
    ``reward``), and their jitted step fed both would compile a second time (seconds for craftax and brax)."""

    def strong(x):
        x = jnp.asarray(x)  # a Python number leaf (jit would return it weakly typed)
        return jax.lax.convert_element_type(x, x.dtype) if x.weak_type else x

    return lambda *args: jax.tree.map(strong, f(*args))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.environment_id)
def test_steps_as_the_library_does(case):
    module = {"playground": "mujoco_playground"}.get(
        case.environment_id.split(":")[0], case.environment_id.split(":")[0]
    )
    pytest.importorskip(module, reason=f"{module} is not installed on this stack (make install installs it)")
    environment = make_device_environment(case.environment_id)
    library_reset, library_step = (jax.jit(_strongly_typed(f)) for f in case.library())
    reset, step = jax.jit(environment.reset), jax.jit(environment.step)
    spec = environment.spec()
    key = jax.random.PRNGKey(7)
    state, timestep = reset(key)
    library_state, observation = library_reset(jax.random.split(key)[1])
    _assert_same(timestep.observation, observation, "first observation")
    steps, ends = 0, {0.0: 0, 1.0: 0}
    action_keys = jax.random.split(jax.random.PRNGKey(1), case.steps)
    for i in range(case.steps):
        action = _random_action(spec.actions, action_keys[i])
        _, transition_key, reset_key = jax.random.split(state.key, 3)
        was_last = int(timestep.step_type) == LAST
        state, timestep = step(state, action)
        if was_last:
            library_state, observation = library_reset(reset_key)
            assert int(timestep.step_type) == FIRST, f"step {i}: an episode's end must be followed by its start"
            assert float(timestep.reward) == 0.0 and float(timestep.discount) == 1.0
            steps = 0
        else:
            library_state, observation, reward, done, discount = library_step(library_state, action, transition_key)
            steps += 1
            at_limit = steps >= environment.max_episode_steps
            assert int(timestep.step_type) == (LAST if bool(done) or at_limit else MID), (
                f"step {i} (episode step {steps})"
            )
            expected_discount = 1.0 if at_limit else float(discount)
            assert float(timestep.discount) == expected_discount, f"step {i}: discount"
            np.testing.assert_allclose(float(timestep.reward), float(reward), rtol=1e-5, atol=1e-6, err_msg=f"step {i}")
            if int(timestep.step_type) == LAST:
                ends[float(timestep.discount)] += 1
        _assert_same(timestep.observation, observation, f"step {i}: observation")
    assert (ends[0.0] > 0) == case.terminations, f"terminations seen: {ends[0.0]}"
    assert (ends[1.0] > 0) == case.truncations, f"truncations seen: {ends[1.0]}"
    # A step returns the state's own types (none weakly typed where the reset's was not), so each jitted step
    # compiles once: the device loop's step here, and the host view's advance (traced only).
    assert step._cache_size() == 1, "the step compiled again for the state it had returned"
    types = lambda tree: [(x.shape, x.dtype, x.weak_type) for x in jax.tree.leaves(jax.eval_shape(lambda: tree))]  # noqa: E731
    assert types(jax.eval_shape(environment.advance, state, action)[0]) == types(state), "advance changed its types"


def test_the_factory_knows_every_jax_family():
    from acme.environments import factory
    from acme.environments.device import DEVICE_PREFIXES

    assert set(factory.JAX_PREFIXES) == set(DEVICE_PREFIXES) <= set(factory.KNOWN_PREFIXES)


def test_host_factory_and_errors():
    pytest.importorskip("gymnax", reason="gymnax is not installed on this stack (make install installs it)")
    host = make_environment("gymnax:CartPole-v1", seed=3)
    first = host.reset()
    assert first.first() and first.observation.shape == (4,) and first.observation.dtype == np.float32
    assert host.step(np.int32(1)).mid()
    with pytest.raises(
        UnknownEnvironmentError, match=r"gymnax has no environment 'CartPol-v1'\. Did you mean gymnax:CartPole-v1"
    ):
        make_environment("gymnax:CartPol-v1")


def test_refuses_multi_discrete_actions():
    pytest.importorskip("jumanji", reason="jumanji is not installed on this stack (make install installs it)")
    with pytest.raises(
        ValueError, match=r"'jumanji:Tetris-v0' cannot run here: Its action space is a MultiDiscreteArray.*Snake-v1"
    ):
        make_device_environment("jumanji:Tetris-v0")


def test_playground_policy_sees_the_state_entry():
    from acme.environments.jax_libraries.brax_style import policy_observation

    observation = {"state": jnp.ones(3), "privileged_state": jnp.zeros(5)}
    assert policy_observation(observation).shape == (3,)
    assert policy_observation(jnp.ones(4)).shape == (4,)
