"""With local replay, an in-process run needs neither reverb nor TensorFlow.

The check runs in a fresh interpreter where importing ``reverb`` or
``tensorflow`` fails, as on a stack without them: every agent's builder,
networks and learner, ``acme.experiments`` and a short local-replay run (with a
checkpoint, so saving and resuming are covered) must work, and neither module
may end up in ``sys.modules``. Without the block, reverb is still never imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import importlib.abc, sys

    BLOCKED = ("reverb", "tensorflow")

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: this run must not need it")
            return None

    if sys.argv[1] == "block":
        sys.meta_path.insert(0, Block())

    from acme.experiments import CheckpointingConfig, ExperimentConfig, run_experiment
    from acme.utils import loggers
    from baselines import registry

    for agent in registry.agent_names():
        entry = registry.get_agent(agent)
        entry.make_builder(entry.make_config())
    quiet = lambda label, steps_key=None: loggers.NoOpLogger()
    for agent, env, overrides in (("dqn", "gymnasium:CartPole-v1", dict(hidden_sizes=(8,), min_replay_size=50)),
                                  ("sac", "gymnasium:Pendulum-v1", dict(policy_hidden_sizes=(8,),
                                   critic_hidden_sizes=(8,), min_replay_size=50, batch_size=16))):
        config = registry.make_experiment_config(agent, env, seed=0, max_steps=250, eval_every=250,
                                                 num_eval_episodes=1, logger_factory=quiet,
                                                 config_overrides=overrides)
        import dataclasses
        directory = sys.argv[2] + "/" + agent
        config = dataclasses.replace(config, checkpointing=CheckpointingConfig(directory, every_learner_steps=20))
        first = run_experiment(config, progress=False)
        assert first.learner_steps > 0, first
        resumed = run_experiment(dataclasses.replace(config, max_num_actor_steps=400), progress=False)
        assert resumed.actor_steps == 400 and resumed.learner_steps > first.learner_steps, resumed
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print("LOADED", loaded)
    assert not [m for m in loaded if m.startswith("reverb")], loaded
    if sys.argv[1] == "block":
        assert not loaded, loaded
    print("OK")
""")


def _run(mode: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(tmp_path / mode)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


# These two mean something only where reverb and TensorFlow are installed (the reverb stack): elsewhere nothing
# could import them.
@pytest.mark.reverb
def test_local_replay_runs_with_reverb_and_tensorflow_unimportable(tmp_path):
    result = _run("block", tmp_path)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-4000:]


@pytest.mark.reverb
def test_local_replay_never_imports_reverb(tmp_path):
    result = _run("allow", tmp_path)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-4000:]


def test_importing_the_experiment_config_loads_no_runner():
    script = textwrap.dedent("""
        import sys
        from acme.experiments import ExperimentConfig
        runners = ("acme.experiments.in_process", "acme.experiments.distributed", "launch", "reverb", "tensorflow")
        loaded = sorted(m for m in sys.modules if m.startswith(runners))
        assert not loaded, loaded
        from acme.experiments import run_experiment, make_distributed_experiment
        assert callable(run_experiment) and callable(make_distributed_experiment)
        print("OK")
    """)
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-4000:]
