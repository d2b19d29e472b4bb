"""Shared continuous-control pieces in acme/: distributions, heads, critics, running statistics, optimiser steps."""

import dataclasses

import chex
import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from acme import specs
from acme.agents.config_checks import ConfigChecker, check_transition_replay
from acme.jax import networks, running_statistics
from acme.jax.optimization import apply_gradients, gradient_step
from acme.testing import fakes


def test_tanh_gaussian_log_prob_is_the_change_of_variables():
    mean = jnp.array([[0.3, -0.2]])
    log_std = jnp.array([[-0.5, 0.1]])
    action, log_prob = networks.sample_tanh_gaussian(jax.random.PRNGKey(0), mean, log_std)
    action = np.asarray(action, np.float64)
    pre = np.arctanh(action)
    std = np.exp(np.asarray(log_std, np.float64))
    gaussian = -0.5 * ((pre - np.asarray(mean)) / std) ** 2 - np.log(std) - 0.5 * np.log(2 * np.pi)
    expected = np.sum(gaussian - np.log(1 - action**2), axis=-1)
    np.testing.assert_allclose(np.asarray(log_prob), expected, rtol=1e-4, atol=1e-4)
    assert np.all(np.abs(action) < 1)


def test_tanh_log_det_is_stable_for_large_inputs():
    x = jnp.array([-50.0, -5.0, 0.0, 5.0, 50.0])
    values = networks.tanh_log_det_jacobian(x)
    assert np.all(np.isfinite(values))
    np.testing.assert_allclose(values[1:4], np.log(1 - np.tanh(np.asarray(x[1:4])) ** 2), rtol=1e-4)


def _apply(module_fn, *inputs):
    transformed = hk.without_apply_rng(hk.transform(module_fn))
    params = transformed.init(jax.random.PRNGKey(0), *inputs)
    return transformed.apply(params, *inputs), params


def test_heads_bound_their_outputs():
    features = jnp.ones((4, 8)) * 10.0
    (mean, log_std), _ = _apply(lambda f: networks.TanhGaussianHead(3, -5.0, 2.0)(f), features)
    assert mean.shape == log_std.shape == (4, 3)
    assert np.all((log_std >= -5.0) & (log_std <= 2.0))
    (g_mean, g_std), _ = _apply(lambda f: networks.GaussianHead(3, init_std=0.5)(f), features)
    assert np.all(np.abs(g_mean) < 1)
    # Near init_std at initialisation for unit features (with features of 10 the near-zero weights' draw,
    # which differs between jax versions, can move it by 0.07).
    (_, g_std), _ = _apply(lambda f: networks.GaussianHead(3, init_std=0.5)(f), jnp.ones((4, 8)))
    np.testing.assert_allclose(g_std, 0.5, atol=0.05)
    action, _ = _apply(lambda f: networks.DeterministicHead(2)(f), features)
    assert action.shape == (4, 2) and np.all(np.abs(action) <= 1)
    with pytest.raises(ValueError, match="min_log_std"):
        _apply(lambda f: networks.TanhGaussianHead(1, 2.0, -5.0)(f), features)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_critics_are_independent_and_shaped(layer_norm):
    observation = {"position": jnp.ones((5, 3)), "velocity": jnp.zeros((5, 2))}
    action = jnp.ones((5, 1))
    q, params = _apply(
        lambda o, a: networks.Critic((16, 16), num_critics=2, layer_norm=layer_norm)(o, a), observation, action
    )
    assert q.shape == (2, 5)
    assert not np.allclose(q[0], q[1])  # separately initialised critics
    assert any("critic_0" in name for name in params) and any("critic_1" in name for name in params)
    logits, _ = _apply(lambda o, a: networks.Critic((16,), num_critics=1, num_outputs=11)(o, a), observation, action)
    assert logits.shape == (1, 5, 11)


def test_running_statistics_match_numpy_over_many_batches():
    spec = {"a": specs.Array((3,), np.float32), "b": specs.Array((), np.float32)}
    stats = running_statistics.init_statistics(spec)
    rng = np.random.default_rng(0)
    batches = [
        {"a": rng.normal(2.0, 3.0, size=(n, 3)).astype(np.float32), "b": rng.normal(-1, 0.5, size=n).astype(np.float32)}
        for n in (7, 32, 1, 100)
    ]
    update = jax.jit(running_statistics.update_statistics)
    for batch in batches:
        stats = update(stats, batch)
    everything = {k: np.concatenate([b[k] for b in batches]) for k in ("a", "b")}
    assert float(stats.count) == 140
    for key in ("a", "b"):
        np.testing.assert_allclose(stats.mean[key], everything[key].mean(0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(running_statistics.standard_deviation(stats)[key], everything[key].std(0), rtol=1e-3)
    normalized = running_statistics.normalize(stats, everything)
    np.testing.assert_allclose(np.mean(normalized["a"], 0), 0.0, atol=1e-3)
    far = running_statistics.normalize(stats, {"a": np.full(3, 1e6, np.float32), "b": np.float32(-1e6)}, max_abs=5.0)
    np.testing.assert_allclose(far["a"], 5.0)
    np.testing.assert_allclose(far["b"], -5.0)


def test_statistics_leave_observations_alone_until_updated_and_when_disabled():
    spec = specs.Array((2,), np.float32)
    stats = running_statistics.init_statistics(spec)
    x = np.array([[3.0, -4.0]], np.float32)
    np.testing.assert_array_equal(running_statistics.normalize(stats, x), x)
    off = running_statistics.ObservationNormalizer(enabled=False)
    assert off.update(stats, x) is stats
    np.testing.assert_array_equal(off.apply(stats, x), x)
    on = running_statistics.ObservationNormalizer(enabled=True)
    assert float(on.update(stats, x).count) == 1


def test_gradient_step_is_value_and_grad_then_the_optimiser_update():
    optimizer = optax.adam(0.1)
    params = {"w": jnp.array([1.0, -2.0])}

    def loss_fn(p, scale):
        return scale * jnp.sum(p["w"] ** 2), p["w"][0]

    (loss, aux), grads, new_params, new_state = gradient_step(loss_fn, optimizer, params, optimizer.init(params), 3.0)
    expected_grads = {"w": 6.0 * params["w"]}
    updates, expected_state = optimizer.update(expected_grads, optimizer.init(params))
    assert float(loss) == 15.0 and float(aux) == 1.0
    np.testing.assert_allclose(grads["w"], expected_grads["w"])
    np.testing.assert_allclose(new_params["w"], optax.apply_updates(params, updates)["w"])
    chex.assert_trees_all_close(new_state, expected_state)

    loss_only, _, no_aux_params, _ = gradient_step(
        lambda p: jnp.sum(p["w"]), optimizer, params, optimizer.init(params), has_aux=False
    )
    assert float(loss_only) == -1.0
    same_params, _ = apply_gradients(optimizer, {"w": jnp.ones(2)}, params, optimizer.init(params))
    np.testing.assert_allclose(no_aux_params["w"], same_params["w"])


@dataclasses.dataclass(frozen=True)
class _ReplayFields:
    discount: float = 0.99
    n_step: int = 1
    batch_size: int = 32
    min_replay_size: int = 10
    max_replay_size: int = 100
    samples_per_insert: float = 8.0
    samples_per_insert_tolerance: float = 0.1
    replay_table_name: str = "table"
    prefetch_size: int = 2
    variable_update_period: int = 1
    num_sgd_steps_per_step: int = 1
    max_abs_reward: float | None = None


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("discount", -0.1, r"Invalid _ReplayFields: discount must be in \[0, 1\]"),
        ("n_step", 1.5, "n_step must be an integer >= 1"),
        ("batch_size", True, "batch_size must be an integer >= 1"),
        ("max_replay_size", 5, r"max_replay_size \(5\) must be >= min_replay_size \(10\)"),
        ("samples_per_insert", 0, "samples_per_insert must be > 0"),
        ("replay_table_name", "", "replay_table_name must be a non-empty string"),
        ("num_sgd_steps_per_step", 0, "num_sgd_steps_per_step must be an integer >= 1"),
        ("max_abs_reward", 0.0, r"max_abs_reward must be None \(rewards as given\) or a number > 0"),
    ],
)
def test_transition_replay_checks(field, value, message):
    check_transition_replay(_ReplayFields())
    with pytest.raises(ValueError, match=message):
        check_transition_replay(dataclasses.replace(_ReplayFields(), **{field: value}))


def test_config_checker_layer_sizes():
    @dataclasses.dataclass(frozen=True)
    class Sizes:
        hidden: tuple = (0, 4)

    with pytest.raises(ValueError, match="hidden must be a non-empty sequence of positive integer layer widths"):
        ConfigChecker(Sizes()).layer_sizes(Sizes(), "hidden")


def test_continuous_action_size_explains_what_is_needed():
    assert specs.continuous_action_size(fakes.continuous_spec(action_dim=3)) == 3
    with pytest.raises(ValueError, match="bounded continuous action space"):
        specs.continuous_action_size(fakes.discrete_spec(), "SAC")
    wide = fakes.continuous_spec()._replace(actions=specs.BoundedArray((1,), np.float32, -2.0, 2.0))
    with pytest.raises(ValueError, match=r"\[-2.0, 2.0\].*canonical_actions=True"):
        specs.continuous_action_size(wide, "SAC")
