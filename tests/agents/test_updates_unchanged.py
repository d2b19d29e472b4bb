"""Four updates of every agent give the learner state stored for it, to float32 rounding.

``golden/<agent>-jax<major.minor>.npz`` hold the learner state (every leaf, in tree order) after four single
updates on fixed batches (``TINY``'s configs and ``_batches`` of ``tests/jax/test_fused_updates.py``), written by
``python tests/agents/test_updates_unchanged.py`` with the code on ``sys.path``. A state is compared only with the
golden of its own jax version: from jax 0.5 on (``jax_threefry_partitionable`` by default) the same key draws
other random numbers, so the initial parameters, and every leaf after four updates, differ between jax 0.4 and
0.12 (dqn's two goldens differ in every parameter leaf). Each stack compares the goldens of its own jax:

- the default stack (``make test``, jax 0.12): every agent's, ``test_four_updates_give_the_golden_state``;
- the reverb stack (``make test-reverb``, jax 0.4.34): d4pg's, dqn's, mpo's, sac's and td3's,
  ``test_four_updates_on_the_reverb_stack_give_its_golden_state``.

Where each golden comes from (``git log --diff-filter=A -- tests/agents/golden``, and the commits' messages):

- d4pg, dqn, mpo, sac, td3, for jax 0.4 and 0.12: added in 378d2a5 (issue #16), written from e54aec9, the code
  before that refactor (the shared optimiser step, ``optax.incremental_update``, the shared actor-critic state).
  Written again from e54aec9 on jax 0.12, the jax 0.12 ones are identical.
- c51, mdqn, qrdqn: added in 43f884e, with the agents, from that commit's code.
- iql, td3_bc: added in db00a6d, with the agents, from that commit's code.
- cql: added in db00a6d, written again in b769de8 (which changed CQL's defaults), from b769de8's code.
- bc: added in 3503cb4, from that commit's code (BC itself came in f714a4a).

So the first five agents' updates are checked against the code before the refactor, the others against the code
of the commit that wrote their golden.
"""

from __future__ import annotations

import os
import re
import sys

import jax
import numpy as np
import pytest

from tests.jax.test_fused_updates import TINY, _batches, _learner, _spec

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
REPO = os.path.dirname(os.path.dirname(HERE))
NUM_UPDATES = 4


def _jax_version() -> str:
    return ".".join(jax.__version__.split(".")[:2])


def _pinned_jax(constraints: str) -> str:
    """The jax version (major.minor) a stack's constraints file pins."""
    with open(os.path.join(REPO, constraints)) as f:
        (pin,) = re.findall(r"^jax==(\d+\.\d+)\.", f.read(), flags=re.MULTILINE)
    return pin


DEFAULT_STACK_JAX = _pinned_jax("constraints-current.txt")
REVERB_STACK_JAX = _pinned_jax("constraints.txt")


def _goldens(jax_version: str) -> list[str]:
    """The agents with a golden for ``jax_version``."""
    suffix = f"-jax{jax_version}.npz"
    return sorted(name[: -len(suffix)] for name in os.listdir(GOLDEN) if name.endswith(suffix))


def _after_updates(agent: str) -> dict[str, np.ndarray]:
    learner = _learner(agent, iter(_batches(_spec(agent), NUM_UPDATES)), 1)
    for _ in range(NUM_UPDATES):
        learner.step()
    leaves = jax.tree.leaves(jax.device_get(learner.state))
    return {f"state_{i:03d}": np.asarray(leaf) for i, leaf in enumerate(leaves)}


def _check_against_golden(agent: str) -> None:
    path = os.path.join(GOLDEN, f"{agent}-jax{_jax_version()}.npz")
    if not os.path.exists(path):
        pytest.skip(
            f"no golden for {agent} on jax {_jax_version()} (the stacks run jax {DEFAULT_STACK_JAX} and "
            f"{REVERB_STACK_JAX}); python tests/agents/test_updates_unchanged.py writes one"
        )
    with np.load(path) as stored:
        expected = dict(stored)
    actual = _after_updates(agent)
    assert sorted(actual) == sorted(expected), f"the state's structure changed against {path}"
    for name in sorted(expected):
        np.testing.assert_allclose(
            actual[name], expected[name], rtol=1e-6, atol=1e-7, err_msg=f"{agent} {name} against {path}"
        )


def test_every_agent_has_a_golden_on_the_default_stack_and_every_golden_has_a_stack():
    assert _goldens(DEFAULT_STACK_JAX) == sorted(TINY)
    for name in os.listdir(GOLDEN):  # a golden that no stack compares would never be checked
        match = re.fullmatch(r"(.+)-jax(\d+\.\d+)\.npz", name)
        assert match and match[1] in TINY and match[2] in (DEFAULT_STACK_JAX, REVERB_STACK_JAX), name


@pytest.mark.parametrize("agent", sorted(TINY))
def test_four_updates_give_the_golden_state(agent):
    _check_against_golden(agent)


# Marked reverb: make test-reverb selects its tests by marker, and this one needs the reverb stack's jax (the default
# stack skips it, saying reverb is not installed there).
@pytest.mark.reverb
@pytest.mark.parametrize("agent", _goldens(REVERB_STACK_JAX))
def test_four_updates_on_the_reverb_stack_give_its_golden_state(agent):
    assert _jax_version() == REVERB_STACK_JAX, (
        f"the reverb stack pins jax {REVERB_STACK_JAX}, this is {jax.__version__}"
    )
    _check_against_golden(agent)


if __name__ == "__main__":  # writes the golden files for this jax version from the code on sys.path
    os.makedirs(GOLDEN, exist_ok=True)
    for name in sorted(TINY):
        target = os.path.join(GOLDEN, f"{name}-jax{_jax_version()}.npz")
        np.savez(target, **_after_updates(name))
        print("wrote", target, file=sys.stderr)
