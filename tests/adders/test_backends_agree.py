"""The same experience through each adder gives bitwise the same items on the local backend and on reverb."""

from __future__ import annotations

import numpy as np
import pytest
import tree

from acme import specs
from acme.adders import EpisodeAdder, NStepTransitionAdder, SequenceAdder
from acme.testing import fakes
from tests.adders.helpers import queue, read_all

SPEC = fakes.discrete_spec(obs_shape=(3,), num_actions=3)
EXTRAS = {"logits": specs.Array((3,), np.float32)}


def _play(adder, seed: int) -> None:
    """Episodes of random lengths, ends (termination or truncation), discounts, actions and extras."""
    rng = np.random.default_rng(seed)
    for _ in range(4):
        length = int(rng.integers(1, 9))
        env = fakes.FakeEnvironment(
            SPEC,
            episode_length=length,
            truncate=bool(rng.integers(2)),
            reward_fn=lambda t: float(rng.normal()),
            discount_fn=lambda t: float(rng.uniform(0.5, 1.0)),
        )
        timestep = env.reset()
        adder.add_first(timestep)
        while not timestep.last():
            action = np.int32(rng.integers(3))
            timestep = env.step(action)
            adder.add(action, timestep, extras={"logits": rng.normal(size=3).astype(np.float32)})


ADDERS = {
    "n_step_transitions": (
        lambda client: NStepTransitionAdder(client, 3, 0.9, {"replay": lambda item: 1.0 + float(np.abs(item.reward))}),
        lambda: NStepTransitionAdder.signature(SPEC, EXTRAS),
    ),
    "padded_sequences": (
        lambda client: SequenceAdder(client, 4, 2, {"replay": None}),
        lambda: SequenceAdder.signature(SPEC, 4, EXTRAS),
    ),
    "unpadded_sequences_across_episodes": (
        lambda client: SequenceAdder(
            client, 3, 1, {"replay": None}, pad_end_of_episode=False, break_end_of_episode=False
        ),
        lambda: SequenceAdder.signature(SPEC, 3, EXTRAS),
    ),
    "episodes": (
        lambda client: EpisodeAdder(client, 10, {"replay": None}),
        lambda: EpisodeAdder.signature(SPEC, extras_spec=EXTRAS),
    ),
}


@pytest.mark.parametrize("kind", sorted(ADDERS))
@pytest.mark.reverb
def test_both_backends_receive_identical_items(make_reverb_client, kind):
    from acme.replay.local_client import LocalReplay

    make_adder, signature = ADDERS[kind]
    items = {}
    for backend, client in (
        ("reverb", make_reverb_client(queue("replay", signature()))),
        ("local", LocalReplay([queue("replay", signature())])),
    ):
        adder = make_adder(client)
        _play(adder, seed=7)
        adder.close()
        items[backend] = read_all(client, "replay")
    assert len(items["local"]) == len(items["reverb"]) >= 4
    for local, remote in zip(items["local"], items["reverb"]):
        assert float(local.info.priority) == float(remote.info.priority)
        local_leaves, remote_leaves = tree.flatten(local.data), tree.flatten(remote.data)
        assert len(local_leaves) == len(remote_leaves)
        for a, b in zip(local_leaves, remote_leaves):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
