"""Learning-curve pictures from evaluation results."""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping, Sequence


def plot_learning_curve(
    path: str,
    steps: Sequence[int],
    returns: Sequence[float],
    stds: Sequence[float] | None = None,
    title: str = "",
    target: float | None = None,
    steps_label: str = "actor steps",
) -> str:
    """Writes a PNG of evaluation return against ``steps`` (``steps_label``) and returns its path."""
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
    axis.set_xlabel(steps_label)
    axis.set_ylabel("mean evaluation return")
    axis.set_title(title)
    axis.legend(loc="lower right")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


@dataclasses.dataclass(frozen=True)
class CurveGroup:
    """Several seeds' evaluation curves, drawn as one line (their mean) with a band (± one standard deviation)."""

    label: str
    steps: Sequence[Sequence[int]]
    seconds: Sequence[Sequence[float]]
    returns: Sequence[Sequence[float]]
    seconds_estimated: bool = False


# Points of the common axis the seeds' curves are interpolated onto, where their evaluation points differ.
_GRID_POINTS = 50


def _mean_and_std(xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]]):
    """The seeds' mean and standard deviation on a common axis: their own points when every seed has the same
    ones, else ``_GRID_POINTS`` points over the range every seed covers (each seed linearly interpolated)."""
    import numpy as np

    if all(list(x) == list(xs[0]) for x in xs):
        grid = np.asarray(xs[0], dtype=float)
    else:
        low, high = max(x[0] for x in xs), min(x[-1] for x in xs)
        grid = np.linspace(low, high, _GRID_POINTS) if high > low else np.asarray([high], dtype=float)
    values = np.stack([np.interp(grid, np.asarray(x, float), np.asarray(y, float)) for x, y in zip(xs, ys)])
    return grid, values.mean(axis=0), values.std(axis=0)


# Curves whose ends differ by more than this factor are drawn on a logarithmic axis.
_LOG_SCALE_SPREAD = 5.0

# The size of plot_curve_groups' pictures, in pixels: two panels side by side.
CURVE_GROUPS_SIZE = (1200, 450)


def plot_curve_groups(
    path: str, groups: Sequence[CurveGroup], title: str = "", targets: Mapping[float, str] | None = None, dpi: int = 100
) -> str:
    """Writes a PNG of two panels, evaluation return against actor steps and against wall-clock seconds, with
    one line and band per group and each target (value: legend label) dashed; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width, height = CURVE_GROUPS_SIZE
    figure, (by_steps, by_seconds) = plt.subplots(1, 2, figsize=(width / dpi, height / dpi), dpi=dpi)
    for index, group in enumerate(groups):
        colour = f"C{index % 10}"
        for axis, xs, suffix in (
            (by_steps, group.steps, ""),
            (by_seconds, group.seconds, " (time estimated)" if group.seconds_estimated else ""),
        ):
            grid, mean, std = _mean_and_std(xs, group.returns)
            axis.plot(grid, mean, color=colour, label=group.label + suffix)
            if len(group.returns) > 1:
                axis.fill_between(grid, mean - std, mean + std, color=colour, alpha=0.2)
    for axis, xlabel, xs in (
        (by_steps, "actor steps", [x for g in groups for x in g.steps]),
        (by_seconds, "wall-clock seconds", [x for g in groups for x in g.seconds]),
    ):
        ends = [x[-1] for x in xs if len(x)]
        if ends and min(ends) > 0 and max(ends) > _LOG_SCALE_SPREAD * min(ends):
            axis.set_xscale("log")  # curves of very different lengths (budgets of 20k and 500k steps)
            xlabel += " (log scale)"
        for style, (value, label) in zip(("--", ":", "-."), sorted((targets or {}).items())):
            axis.axhline(value, color="grey", linestyle=style, label=label)
        axis.set_xlabel(xlabel)
        axis.set_ylabel("mean evaluation return")
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize="small")
    figure.suptitle(title)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path


# The size of plot_performance_profiles' pictures, in pixels: the profiles, and the legend beside them.
PROFILES_SIZE = (900, 450)


def plot_performance_profiles(
    path: str,
    taus: Sequence[float],
    profiles: Mapping[str, tuple[Sequence[float], Sequence[Sequence[float]]]],
    title: str = "",
    dpi: int = 100,
) -> str:
    """Writes a PNG of performance profiles: for each agent (``profiles``: agent: (fraction of runs above each
    tau, its (2, taus) band of lower and upper bounds)), a line against tau and its band; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width, height = PROFILES_SIZE
    figure, axis = plt.subplots(figsize=(width / dpi, height / dpi), dpi=dpi)
    palette = plt.get_cmap("tab10" if len(profiles) <= 10 else "tab20")
    for index, (agent, (profile, band)) in enumerate(profiles.items()):
        colour = palette(index % palette.N)
        axis.plot(taus, profile, color=colour, label=agent)
        axis.fill_between(taus, band[0], band[1], color=colour, alpha=0.15)
    axis.axvline(1.0, color="grey", linestyle="--", linewidth=0.8)
    axis.set_xlabel("normalised score τ (0: random policy, 1: target)")
    axis.set_ylabel("fraction of runs with score > τ")
    axis.set_ylim(-0.02, 1.02)
    axis.grid(alpha=0.3)
    axis.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
    axis.set_title(title)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path
