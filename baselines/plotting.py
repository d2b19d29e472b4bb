"""Learning-curve pictures from evaluation results."""

from __future__ import annotations

import os
from typing import Sequence


def plot_learning_curve(
    path: str,
    steps: Sequence[int],
    returns: Sequence[float],
    stds: Sequence[float] | None = None,
    title: str = "",
    target: float | None = None,
) -> str:
    """Writes a PNG of evaluation return against actor steps and returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(steps, returns, marker="o", markersize=3, label="evaluation return")
    if stds is not None:
        low = np.asarray(returns) - np.asarray(stds)
        high = np.asarray(returns) + np.asarray(stds)
        axis.fill_between(steps, low, high, alpha=0.2)
    if target is not None:
        axis.axhline(target, color="grey", linestyle="--", label=f"target {target:g}")
    axis.set_xlabel("actor steps")
    axis.set_ylabel("mean evaluation return")
    axis.set_title(title)
    axis.legend(loc="lower right")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
