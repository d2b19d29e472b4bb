"""Running mean and variance of nested observations, and normalisation by them.

The statistics are a pytree of arrays, updated inside jitted learner steps
with Chan et al.'s parallel algorithm, so they can be saved, restored and
sent to actors with the policy parameters.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acme import types


class RunningStatistics(NamedTuple):
    count: jnp.ndarray  # number of observations seen (float32 scalar)
    mean: Any  # nest like the observations
    summed_variance: Any  # sum of squared deviations from the mean, nest like the observations


def init_statistics(observation_spec: Any) -> RunningStatistics:
    """Empty statistics for observations of ``observation_spec``."""
    zeros = jax.tree.map(lambda x: jnp.zeros(x.shape, jnp.float32), types.zeros_like_spec(observation_spec))
    return RunningStatistics(jnp.zeros((), jnp.float32), zeros, zeros)


def update_statistics(statistics: RunningStatistics, batch: Any) -> RunningStatistics:
    """Folds a batch (leaves ``[*batch_dims, *shape]``) into the statistics."""
    mean_leaves, treedef = jax.tree.flatten(statistics.mean)
    batch_leaves = treedef.flatten_up_to(batch)
    var_leaves = treedef.flatten_up_to(statistics.summed_variance)
    num_batch_dims = batch_leaves[0].ndim - mean_leaves[0].ndim
    axes = tuple(range(num_batch_dims))
    batch_count = jnp.asarray(jnp.prod(jnp.asarray(batch_leaves[0].shape[:num_batch_dims])), jnp.float32)
    total = statistics.count + batch_count
    new_means, new_vars = [], []
    for mean, summed_var, x in zip(mean_leaves, var_leaves, batch_leaves):
        x = x.astype(jnp.float32)
        batch_mean = jnp.mean(x, axis=axes)
        batch_summed_var = jnp.sum(jnp.square(x - batch_mean), axis=axes)
        delta = batch_mean - mean
        new_means.append(mean + delta * batch_count / total)
        new_vars.append(summed_var + batch_summed_var + jnp.square(delta) * statistics.count * batch_count / total)
    return RunningStatistics(total, treedef.unflatten(new_means), treedef.unflatten(new_vars))


def standard_deviation(statistics: RunningStatistics, min_std: float = 1e-3) -> Any:
    count = jnp.maximum(statistics.count, 1.0)
    return jax.tree.map(lambda v: jnp.maximum(jnp.sqrt(v / count), min_std), statistics.summed_variance)


def normalize(statistics: RunningStatistics, observations: Any, max_abs: float = 5.0) -> Any:
    """``(x - mean) / std`` clipped to ``[-max_abs, max_abs]``; identity before any update."""
    std = standard_deviation(statistics)
    seen = statistics.count > 0

    def one(x, mean, s):
        normalized = jnp.clip((x.astype(jnp.float32) - mean) / s, -max_abs, max_abs)
        return jnp.where(seen, normalized, x.astype(jnp.float32))

    return jax.tree.map(one, observations, statistics.mean, std)


@dataclasses.dataclass(frozen=True)
class ObservationNormalizer:
    """Running-statistics normalisation that an agent can switch off.

    Learners keep the statistics in their state, update them from each sampled
    batch and hand them to actors beside the policy parameters; when
    ``enabled`` is False, ``update`` and ``apply`` leave everything unchanged.
    """

    enabled: bool = False
    max_abs: float = 5.0

    def init(self, observation_spec: Any) -> RunningStatistics:
        return init_statistics(observation_spec)

    def update(self, statistics: RunningStatistics, observations: Any) -> RunningStatistics:
        return update_statistics(statistics, observations) if self.enabled else statistics

    def apply(self, statistics: RunningStatistics, observations: Any) -> Any:
        return normalize(statistics, observations, self.max_abs) if self.enabled else observations

    def normalize_transitions(self, statistics: RunningStatistics, transitions: Any) -> tuple[RunningStatistics, Any]:
        """Folds a batch of transitions' observations into the statistics and returns the batch normalised.

        Observations and next observations are normalised with the updated
        statistics; actions, rewards and discounts are cast to float32.
        """
        statistics = self.update(statistics, transitions.observation)
        return statistics, transitions._replace(
            observation=self.apply(statistics, transitions.observation),
            next_observation=self.apply(statistics, transitions.next_observation),
            action=transitions.action.astype(jnp.float32),
            reward=transitions.reward.astype(jnp.float32),
            discount=transitions.discount.astype(jnp.float32),
        )
