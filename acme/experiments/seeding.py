"""Every random stream of an experiment, derived from its one seed, the same way in-process and distributed.

- The learner, the actors and the evaluator each get a key from
  ``split(PRNGKey(seed), 3)``: the learner the first, the evaluator the third.
  Actor 0 (the only one in-process) takes the second; actor i > 0 folds
  ``i`` into it (offset by ``ACTOR_KEY_OFFSET``, so no actor's key is actor 0's
  after a resume), and a run resumed for the r-th time folds ``r`` into that.
  An actor driving K environments splits its key into K.
- Environment i of actor j, after r resumes, is seeded
  ``seed + ACTOR_SEED_STRIDE * j + RESUME_SEED_STRIDE * r + ENV_SEED_STRIDE * i``;
  the evaluator's environment i ``seed + EVALUATOR_SEED_OFFSET + ENV_SEED_STRIDE * i`` (it runs its
  episodes side by side, one environment each). The strides
  are primes larger than any budget's episode count, so no two streams meet.

So an in-process run is actor 0 of a distributed one, and a resumed run does
not replay the random streams of its first start.
"""

from __future__ import annotations

import dataclasses

import jax

ENV_SEED_STRIDE = 104_723
ACTOR_SEED_STRIDE = 7_919
RESUME_SEED_STRIDE = 104_729
EVALUATOR_SEED_OFFSET = 1_000_003
ACTOR_KEY_OFFSET = 1 << 20


@dataclasses.dataclass(frozen=True)
class ExperimentSeeds:
    """The keys and environment seeds of an experiment with seed ``seed`` (see the module docstring)."""

    seed: int

    def _keys(self) -> jax.Array:
        return jax.random.split(jax.random.PRNGKey(self.seed), 3)

    def learner_key(self) -> jax.Array:
        return self._keys()[0]

    def evaluator_key(self) -> jax.Array:
        return self._keys()[2]

    def actor_keys(self, actor_id: int = 0, num_envs: int = 1, resumes: int = 0) -> list[jax.Array]:
        """The keys of actor ``actor_id``'s ``num_envs`` environments (one key, unsplit, when there is one)."""
        key = self._keys()[1]
        if actor_id:
            key = jax.random.fold_in(key, ACTOR_KEY_OFFSET + actor_id)
        if resumes:
            key = jax.random.fold_in(key, resumes)
        return _per_environment(key, num_envs)

    def environment_seeds(self, actor_id: int = 0, num_envs: int = 1, resumes: int = 0) -> list[int]:
        """The seeds of actor ``actor_id``'s ``num_envs`` environments."""
        base = self.seed + ACTOR_SEED_STRIDE * actor_id + RESUME_SEED_STRIDE * resumes
        return [base + ENV_SEED_STRIDE * i for i in range(num_envs)]

    def evaluator_environment_seed(self) -> int:
        return self.seed + EVALUATOR_SEED_OFFSET

    def evaluator_environment_seeds(self, num_envs: int) -> list[int]:
        """The seeds of the evaluator's ``num_envs`` environments (the first is ``evaluator_environment_seed``)."""
        return [self.evaluator_environment_seed() + ENV_SEED_STRIDE * i for i in range(num_envs)]

    def evaluator_keys(self, num_envs: int) -> list[jax.Array]:
        """The keys of the evaluator's ``num_envs`` environments (its key, unsplit, when there is one)."""
        return _per_environment(self.evaluator_key(), num_envs)


def _per_environment(key: jax.Array, num_envs: int) -> list[jax.Array]:
    """``key`` itself for one environment, else its split into ``num_envs``."""
    return [key] if num_envs == 1 else list(jax.random.split(key, num_envs))
