"""run_experiment with K environments per actor: budgets, evaluations, learning ratio, checkpoint and resume."""

from __future__ import annotations

import dataclasses

import pytest

from acme.experiments import CheckpointingConfig, ExperimentConfig, run_experiment
from acme.testing import fakes
from acme.utils import loggers
from agents import dqn


def _config(num_envs: int, max_steps: int = 300, **kwargs) -> ExperimentConfig:
    config = dqn.DQNConfig(
        hidden_sizes=(16,),
        batch_size=8,
        min_replay_size=20,
        samples_per_insert=4.0,
        epsilon_decay_steps=50,
        num_sgd_steps_per_step=1,
    )
    spec = fakes.discrete_spec()
    return ExperimentConfig(
        builder=dqn.DQNBuilder(config),
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=20),
        network_factory=lambda s: dqn.make_networks(s, config.hidden_sizes),
        seed=0,
        max_num_actor_steps=max_steps,
        eval_every=100,
        num_eval_episodes=2,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        num_envs_per_actor=num_envs,
        **kwargs,
    )


def test_k_environments_keep_the_budget_the_evaluations_and_the_ratio():
    result = run_experiment(_config(4), progress=False)
    assert result.actor_steps == 300
    assert [e.actor_steps for e in result.evaluations] == [100, 200, 300]
    assert all(e.mean_return == pytest.approx(210.0) for e in result.evaluations)
    # samples_per_insert 4 at batch 8: one learner step per two inserted transitions after the first 20 (140),
    # give or take the limiter's error buffer (16 learner steps) and the episodes in progress at the end.
    assert 120 <= result.learner_steps <= 156


def test_k_environments_checkpoint_and_resume_and_refuse_another_k(tmp_path):
    checkpointing = CheckpointingConfig(str(tmp_path / "ckpt"), every_minutes=None, every_learner_steps=30)
    first = run_experiment(_config(4, checkpointing=checkpointing), progress=False)
    resumed = run_experiment(_config(4, max_steps=500, checkpointing=checkpointing), progress=False)
    assert resumed.actor_steps == 500 and resumed.learner_steps > first.learner_steps
    assert [e.actor_steps for e in resumed.evaluations] == [100, 200, 300, 400, 500]
    with pytest.raises(ValueError, match="drove 4 environments; this one drives 2"):
        run_experiment(_config(2, max_steps=600, checkpointing=checkpointing), progress=False)


def test_num_envs_per_actor_must_be_positive():
    with pytest.raises(ValueError, match="num_envs_per_actor must be an integer >= 1"):
        dataclasses.replace(_config(1), num_envs_per_actor=0)
