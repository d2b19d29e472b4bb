"""``apply_over_time`` (a network over ``[B, T, ...]`` observations, in one call or a step of T at a time) and
``minibatch_epochs``'s early stop."""

from __future__ import annotations

import haiku as hk
import jax
import numpy as np

from acme.jax import on_policy
from acme.jax.torsos import SmallTorso


def _torso_and_boards(batch: int, time: int):
    torso = hk.without_apply_rng(hk.transform(lambda x: hk.Linear(1)(SmallTorso()(x))[..., 0]))
    boards = np.random.default_rng(0).integers(0, 2, (batch, time, 10, 10, 4)).astype(np.float32)
    return torso, jax.jit(torso.init)(jax.random.PRNGKey(0), boards[:, 0]), boards


def test_past_the_row_limit_it_maps_over_time_with_the_same_values_and_a_step_of_the_memory(monkeypatch):
    torso, params, boards = _torso_and_boards(batch=64, time=9)
    whole = jax.jit(lambda p, o: on_policy.apply_over_time(torso.apply, p, o))
    expected = whole(params, boards)
    assert expected.shape == (64, 9)
    np.testing.assert_allclose(expected[:, 4], torso.apply(params, boards[:, 4]), rtol=1e-5, atol=1e-6)

    monkeypatch.setattr(on_policy, "MAX_ROWS_PER_CALL", 64)  # 64 x 9 rows: one step of T at a time
    stepped = jax.jit(lambda p, o: on_policy.apply_over_time(torso.apply, p, o))
    np.testing.assert_allclose(stepped(params, boards), expected, rtol=1e-5, atol=1e-6)

    def scratch(f) -> int:  # bytes XLA allocates for the call besides its inputs and outputs
        return f.lower(params, boards).compile().memory_analysis().temp_size_in_bytes

    assert scratch(stepped) * 4 < scratch(whole)


def _epochs(stop_kl: float):
    """3 epochs of 4 minibatches of plain SGD at step 0.1 on 0.5 (p - 1)^2 from p = 0, where approx_kl is p^2."""
    import optax

    def loss_fn(params, batch):
        loss = 0.5 * (params - 1.0) ** 2 + 0.0 * batch.sum()
        return loss, {"approx_kl": params**2, "loss": loss}

    optimizer = optax.sgd(0.1)
    params = jax.numpy.zeros(())

    @jax.jit
    def run(steps, key):
        return on_policy.minibatch_epochs(loss_fn, optimizer, params, optimizer.init(params), steps, key, 3, 4, stop_kl)

    return run(jax.numpy.arange(8.0), jax.random.PRNGKey(0))


def test_the_epochs_stop_at_the_first_minibatch_past_the_kl_limit_and_apply_none_after_it():
    params, _, metrics = _epochs(0.0)  # no stop: 12 steps, p = 1 - 0.9^12
    np.testing.assert_allclose(params, 1 - 0.9**12, rtol=1e-6)
    assert "update_fraction" not in metrics
    # p after k steps is 1 - 0.9^k, its approx_kl (1 - 0.9^k)^2: past 0.2 from the fifth step's parameters (k = 4:
    # 0.118, k = 5: 0.168, k = 6: 0.219), so six steps are applied and the seventh and later are not.
    params, _, metrics = _epochs(0.2)
    np.testing.assert_allclose(params, 1 - 0.9**6, rtol=1e-6)
    np.testing.assert_allclose(metrics["update_fraction"], 6 / 12)
    np.testing.assert_allclose(metrics["approx_kl"], (1 - 0.9**5) ** 2, rtol=1e-6)  # the last applied step's
