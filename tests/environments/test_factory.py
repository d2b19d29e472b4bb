"""The environment factory and its errors."""

import ctypes.util
import os
import subprocess
import sys

import numpy as np
import pytest

from acme import specs
from acme.environments import UnknownEnvironmentError, make_environment


def test_gymnasium_cartpole():
    env = make_environment("gymnasium:CartPole-v1", seed=0)
    spec = specs.make_environment_spec(env)
    assert spec.actions.num_values == 2
    assert spec.observations.shape == (4,) and spec.observations.dtype == np.float32
    assert env.reset().first()


def test_gymnasium_pendulum_with_canonical_actions():
    env = make_environment("gymnasium:Pendulum-v1", seed=0, canonical_actions=True)
    np.testing.assert_array_equal(env.action_spec().maximum, [1.0])
    env.reset()
    timestep = env.step(np.ones(1, np.float32))
    assert timestep.reward.dtype == np.float32


def test_step_limit_option():
    env = make_environment("gymnasium:Pendulum-v1", seed=0, step_limit=5)
    timestep = env.reset()
    count = 0
    while not timestep.last():
        timestep = env.step(np.zeros(1, np.float32))
        count += 1
    assert count == 5


def test_bsuite_catch():
    env = make_environment("bsuite:catch/0")
    assert env.action_spec().num_values == 3
    assert env.reset().observation.shape == (10, 5)


@pytest.mark.parametrize(
    "bad_id, expected",
    [
        ("CartPole-v1", "no family prefix"),
        ("mujoco:Ant", "Known prefixes: gymnasium, bsuite, dm_control, atari"),
        ("gymnasium:CartPol-v1", "Did you mean gymnasium:CartPole-v1"),
        ("bsuite:catchh/0", "Did you mean bsuite:catch/0"),
        ("gymnasium:", "names no environment"),
    ],
)
def test_unknown_ids_are_explained(bad_id, expected):
    with pytest.raises(UnknownEnvironmentError, match=expected):
        make_environment(bad_id)


def test_atari_without_ale_py_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ale_py", None)  # not installed (make install includes it)
    with pytest.raises(UnknownEnvironmentError, match=r"'atari:Pong' needs ale-py, which is not installed") as error:
        make_environment("atari:Pong")
    message = "Install it, with its ROMs, by: pip install 'ale-py>=0.12.1' (make install includes it)"
    assert str(error.value).endswith(message)


@pytest.mark.dm_control
def test_dm_control_tasks_come_through_the_factory():
    env = make_environment("dm_control:cartpole/swingup", seed=3, canonical_actions=True)
    spec = specs.make_environment_spec(env)
    assert set(spec.observations) == {"position", "velocity"}
    assert spec.observations["position"].dtype == np.float32  # single precision by default
    assert spec.actions.shape == (1,)
    np.testing.assert_array_equal(spec.actions.minimum, -1.0)
    timestep = env.reset()
    assert timestep.first() and timestep.observation["position"].shape == (3,)
    steps = 1
    while not timestep.last():
        timestep = env.step(np.ones(1, np.float32))
        steps += 1
    assert steps == 1001  # 1000 control steps, then a time-limit truncation
    assert timestep.discount == 1.0  # not a termination


@pytest.mark.dm_control
def test_dm_control_same_seed_same_start():
    first = make_environment("dm_control:cartpole/swingup", seed=7).reset().observation
    again = make_environment("dm_control:cartpole/swingup", seed=7).reset().observation
    other = make_environment("dm_control:cartpole/swingup", seed=8).reset().observation
    np.testing.assert_array_equal(first["position"], again["position"])
    assert not np.array_equal(first["position"], other["position"])


@pytest.mark.parametrize(
    "bad, message",
    [
        ("dm_control:cartpole", "dm_control ids are '<domain>/<task>'"),
        ("dm_control:cartpole/swingupp", "Did you mean dm_control:cartpole/swingup"),
        ("dm_control:foo/bar", "dm_control has no domain 'foo'. Its domains: acrobot, ball_in_cup, cartpole, "),
        ("dm_control:cartpole/swingdown", "cartpole domain has no task 'swingdown'.* Its tasks: balance, "),
    ],
)
@pytest.mark.dm_control
def test_dm_control_bad_ids_are_explained(bad, message):
    with pytest.raises(UnknownEnvironmentError, match=message):
        make_environment(bad)


_LOAD_CARTPOLE = (
    "import os; from acme.environments import make_environment; "
    "make_environment('dm_control:cartpole/swingup').reset(); print(os.environ.get('MUJOCO_GL'))"
)


@pytest.mark.parametrize("user_choice", [None, "disable"])
@pytest.mark.dm_control
def test_dm_control_without_a_display_picks_a_headless_backend_unless_the_user_chose(user_choice):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL")}
    if user_choice is not None:
        env["MUJOCO_GL"] = user_choice
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_CARTPOLE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert done.returncode == 0, done.stderr
    assert "DISPLAY" not in done.stderr and "GLFW" not in done.stderr
    backend = done.stdout.split()[-1]
    # Without a choice: EGL if this machine has it, else OSMesa, else rendering disabled; a choice is kept.
    headless = next(
        (name for name, library in (("egl", "EGL"), ("osmesa", "OSMesa")) if ctypes.util.find_library(library)),
        "disable",
    )
    assert backend == (user_choice or headless)
