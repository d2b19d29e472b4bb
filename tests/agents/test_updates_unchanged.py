"""Every agent's update gives the same state and metrics as the code before the issue #16 refactor.

``golden/<agent>-jax<major.minor>.npz`` hold the learner state (every leaf, in
tree order) and the last metrics after four single updates on fixed batches,
written by ``python tests/agents/test_updates_unchanged.py`` from the code at
commit 4f2bd2e (before the shared optimiser step, ``optax.incremental_update``
and the shared actor-critic state), once per stack. The same jax version must
give the same numbers to float32 rounding; another jax version is compared with
the golden of the nearest version (``nearest_golden``) at a looser tolerance (XLA
may order a reduction otherwise).
"""

from __future__ import annotations

import os
import re
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


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def nearest_golden(names: list[str], agent: str, jax_version: str) -> str | None:
    """Of the files ``names``, the golden of ``agent`` written on the jax version nearest ``jax_version`` (as
    numbers, so 0.12 is newer than 0.4): that version's own, else the nearest minor version of the same major
    (the newer on a tie), else the newest of the nearest major. None if ``agent`` has none."""
    pattern = re.compile(rf"{re.escape(agent)}-jax(\d+\.\d+)\.npz")
    stored = {_version(match[1]): name for name in names if (match := pattern.fullmatch(name))}
    if not stored:
        return None
    major, minor = _version(jax_version)
    return stored[
        min(
            stored,
            key=lambda v: (abs(v[0] - major), abs(v[1] - minor) if v[0] == major else 0, -v[0], -v[1]),
        )
    ]


def _golden(agent: str) -> tuple[str, dict[str, np.ndarray]]:
    name = nearest_golden(os.listdir(GOLDEN), agent, _jax_version())
    assert name is not None, f"No golden state for {agent} under {GOLDEN}."
    path = os.path.join(GOLDEN, name)
    with np.load(path) as stored:
        return path, dict(stored)


@pytest.mark.parametrize(
    "agent,jax_version,expected",
    [
        ("dqn", "0.4", "dqn-jax0.4.npz"),  # its own
        ("dqn", "0.12", "dqn-jax0.12.npz"),
        ("dqn", "0.5", "dqn-jax0.4.npz"),
        ("dqn", "0.11", "dqn-jax0.12.npz"),
        ("dqn", "0.13", "dqn-jax0.12.npz"),  # "dqn-jax0.4.npz" sorts after it as a string
        ("dqn", "0.8", "dqn-jax0.12.npz"),  # as near to both: the newer
        ("dqn", "1.0", "dqn-jax0.12.npz"),  # another major: its newest
        ("dqn", "0.12.1", "dqn-jax0.12.npz"),
        ("sac", "0.12", "sac-jax0.4.npz"),  # only one for sac; d4pg's and dqn's are not sac's
        ("td3", "0.4", None),
    ],
)
def test_the_golden_of_the_nearest_jax_version_is_picked(agent, jax_version, expected):
    names = ["dqn-jax0.12.npz", "dqn-jax0.4.npz", "d4pg-jax0.12.npz", "sac-jax0.4.npz", "dqn-jax0.4.npz.tmp", "x"]
    assert nearest_golden(names, agent, jax_version) == expected


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
