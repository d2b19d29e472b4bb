"""``apply_over_time``: a network over ``[B, T, ...]`` observations, in one call or a step of T at a time."""

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
