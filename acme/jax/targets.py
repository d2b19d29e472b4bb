"""Target-network updates."""

from __future__ import annotations

from typing import Any

import jax


def polyak_update(online: Any, target: Any, tau: float) -> Any:
    """``target <- tau * online + (1 - tau) * target``, leaf by leaf (``tau`` in (0, 1])."""
    if not 0 < tau <= 1:
        raise ValueError(f"The Polyak step tau must be in (0, 1], got {tau}.")
    return jax.tree.map(lambda o, t: tau * o + (1.0 - tau) * t, online, target)
