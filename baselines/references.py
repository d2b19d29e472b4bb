"""Published figures of well-known libraries for the registered baselines, for the report's reference column.

Each is quoted from its source as published, at the budget the source states; a pair without a published
figure for the same algorithm and environment has none here.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Reference:
    """A library's published evaluation return for one algorithm on one environment."""

    library: str
    figure: str  # as published, e.g. "500.00 ± 0.00"
    timesteps: int  # the training budget the figure was measured at
    url: str


REFERENCES: dict[tuple[str, str], Reference] = {}
