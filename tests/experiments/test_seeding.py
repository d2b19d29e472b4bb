"""One seeding path: every stream of an experiment comes from ``ExperimentSeeds``, in-process and distributed."""

from __future__ import annotations

import itertools

import jax
import numpy as np

from acme.experiments.seeding import ExperimentSeeds


def _raw(keys) -> list[tuple]:
    return [
        tuple(
            np.asarray(jax.random.key_data(k) if jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key) else k)
            .ravel()
            .tolist()
        )
        for k in keys
    ]


def test_the_keys_are_the_in_process_runners_split_of_the_seed():
    learner, actor, evaluator = jax.random.split(jax.random.PRNGKey(7), 3)
    seeds = ExperimentSeeds(7)
    assert _raw([seeds.learner_key(), seeds.evaluator_key()]) == _raw([learner, evaluator])
    assert _raw(seeds.actor_keys()) == _raw([actor])
    assert _raw(seeds.actor_keys(num_envs=3)) == _raw(list(jax.random.split(actor, 3)))
    assert _raw(seeds.actor_keys(resumes=2)) == _raw([jax.random.fold_in(actor, 2)])


def test_no_two_actors_environments_or_resumes_share_a_key_or_a_seed():
    seeds = ExperimentSeeds(0)
    keys, environment_seeds = [], []
    for actor_id, resumes in itertools.product(range(4), range(3)):
        keys += _raw(seeds.actor_keys(actor_id, num_envs=2, resumes=resumes))
        environment_seeds += seeds.environment_seeds(actor_id, num_envs=2, resumes=resumes)
    keys += _raw([seeds.learner_key(), seeds.evaluator_key()])
    environment_seeds.append(seeds.evaluator_environment_seed())
    assert len(set(keys)) == len(keys)
    assert len(set(environment_seeds)) == len(environment_seeds)


def test_actor_zero_is_the_in_process_actor():
    seeds = ExperimentSeeds(3)
    assert seeds.environment_seeds(0, num_envs=1) == [3]
    assert seeds.environment_seeds(0, num_envs=2, resumes=1)[0] == 3 + 104_729
