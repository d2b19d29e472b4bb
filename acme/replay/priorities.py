"""Writing a learner's new priorities back to the replay items they were computed for."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def priority_writer(replay_client: Any, table: str) -> Callable[[Any, np.ndarray], None]:
    """``write(sample, priorities)``: sets the priority of each item of ``sample`` (by its ``info.key``) in
    ``table``; ``priorities`` has one entry per item, in the sample's order (any shape of that size). Without a
    client (``None``) it writes nothing."""

    def write(sample: Any, priorities: np.ndarray) -> None:
        if replay_client is None:
            return
        keys = np.asarray(sample.info.key).reshape(-1).tolist()
        values = np.asarray(priorities, np.float64).reshape(-1).tolist()
        replay_client.mutate_priorities(table, updates=dict(zip(keys, values)))

    return write
