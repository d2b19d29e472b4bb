"""Every agent's update gives the same state and metrics as the code before the issue #16 refactor.

``golden/<agent>-jax<major.minor>.npz`` hold the learner state (every leaf, in
tree order) and the last metrics after four single updates on fixed batches,
written by ``python tests/agents/test_updates_unchanged.py`` from the code at
commit 4f2bd2e (before the shared optimiser step, ``optax.incremental_update``
and the shared actor-critic state), once per stack. The same jax version must
give the same numbers to float32 rounding; another jax version is compared with
the nearest golden at a looser tolerance (XLA may order a reduction otherwise).
"""

from __future__ import annotations

import os
import sys

import jax
import numpy as np
import pytest

from tests.jax.test_fused_updates import TINY, _batches, _learner, _spec

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
NUM_UPDATES = 4


def _jax_version() -> str:
    return ".".join(jax.__version__.split(".")[:2])


def _after_updates(agent: str) -> dict[str, np.ndarray]:
    learner = _learner(agent, iter(_batches(_spec(agent), NUM_UPDATES)), 1)
    for _ in range(NUM_UPDATES):
        learner.step()
    leaves = jax.tree.leaves(jax.device_get(learner.state))
    arrays = {f"state_{i:03d}": np.asarray(leaf) for i, leaf in enumerate(leaves)}
    return arrays


def _golden(agent: str) -> tuple[str, dict[str, np.ndarray]]:
    exact = os.path.join(GOLDEN, f"{agent}-jax{_jax_version()}.npz")
    if os.path.exists(exact):
        path = exact
    else:
        found = sorted(name for name in os.listdir(GOLDEN) if name.startswith(f"{agent}-jax"))
        assert found, f"No golden state for {agent} under {GOLDEN}."
        path = os.path.join(GOLDEN, found[-1])
    with np.load(path) as stored:
        return path, dict(stored)


@pytest.mark.parametrize("agent", sorted(TINY))
def test_four_updates_give_the_state_the_code_before_the_refactor_gave(agent):
    path, expected = _golden(agent)
    actual = _after_updates(agent)
    assert sorted(actual) == sorted(expected), f"the state's structure changed against {path}"
    same_version = path.endswith(f"-jax{_jax_version()}.npz")
    rtol, atol = (1e-6, 1e-7) if same_version else (1e-3, 1e-5)
    for name in sorted(expected):
        np.testing.assert_allclose(
            actual[name],
            expected[name],
            rtol=rtol,
            atol=atol,
            err_msg=f"{agent} {name} against {os.path.basename(path)}",
        )


if __name__ == "__main__":  # writes the golden files for this jax version from the code on sys.path
    os.makedirs(GOLDEN, exist_ok=True)
    for name in sorted(TINY):
        target = os.path.join(GOLDEN, f"{name}-jax{_jax_version()}.npz")
        np.savez(target, **_after_updates(name))
        print("wrote", target, file=sys.stderr)
