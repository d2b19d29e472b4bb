"""``python -m baselines report --sweep DIR``: a sweep's table, plots and best setting.

Reads each trial's run directory under ``DIR/runs`` (its ``sweep_trial.json`` says which setting and seeds it
ran; its ``result.json``, or ``evaluator.csv`` for a run stopped early, holds the evaluations) and writes
``DIR/report/README.md`` (per setting: final and best return, mean ± std over seeds, and steps to the target),
``DIR/report/return_vs_<field>.png`` for each swept field, ``DIR/report/learning_curves.png`` (one line per
setting, a band over its seeds) and ``DIR/report/summary.json``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Sequence

from baselines import registry
from baselines.sweep import RUNS, SPEC_FILE, TRIAL_FILE, Sweep


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """One seed of one setting: its evaluations (actor steps, wall seconds, mean return) and whether it finished."""

    setting: tuple[tuple[str, str], ...]
    seed: int
    steps: tuple[int, ...]
    seconds: tuple[float, ...]
    returns: tuple[float, ...]
    finished: bool


@dataclasses.dataclass(frozen=True)
class SettingSummary:
    setting: dict[str, str]
    seeds: list[int]
    finished: int
    final: tuple[float, float]  # mean, std over seeds
    best: tuple[float, float]
    steps_to_target: list[int | None]  # per seed; None where the target was not reached

    @property
    def reached(self) -> int:
        return sum(s is not None for s in self.steps_to_target)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _grid_text(sweep: Sweep, field: str, value: Any) -> str:
    """The grid's own spelling of a value an anakin run reports as a number (``1e-3`` for 0.001)."""
    for text in dict(sweep.grid).get(field, ()):
        try:
            if math.isclose(float(text), float(value), rel_tol=1e-6):
                return text
        except ValueError:
            continue
    return f"{value:g}"


def load_runs(sweep_dir: str) -> tuple[Sweep, dict, list[RunRecord]]:
    """The sweep, its state (command, sessions) and a record per seed of every run it started."""
    path = os.path.join(sweep_dir, SPEC_FILE)
    if not os.path.exists(path):
        raise ValueError(
            f"No sweep in {sweep_dir}: expected {path} (python -m baselines sweep --run-dir DIR writes it)."
        )
    with open(path) as f:
        state = json.load(f)
    sweep = Sweep.from_dict(state["sweep"])
    runs_dir = os.path.join(sweep_dir, RUNS)
    records = []
    for folder in sorted(os.listdir(runs_dir)) if os.path.isdir(runs_dir) else []:
        run_dir = os.path.join(runs_dir, folder)
        if not os.path.exists(os.path.join(run_dir, TRIAL_FILE)):
            continue
        with open(os.path.join(run_dir, TRIAL_FILE)) as f:
            trial = json.load(f)
        records.extend(_records_of(sweep, run_dir, trial))
    return sweep, state, records


def _records_of(sweep: Sweep, run_dir: str, trial: dict) -> list[RunRecord]:
    from baselines.results import evaluations_from_rows, evaluator_rows

    setting = dict(trial["setting"])
    result_path = os.path.join(run_dir, "result.json")
    result = None
    if os.path.exists(result_path):
        try:
            with open(result_path) as f:
                result = json.load(f)
        except ValueError:  # not a run's complete result: read as an unfinished run
            result = None
    finished = result is not None
    if not finished:  # stopped early (ASHA) or not finished: what its evaluator logged
        rows = evaluator_rows(run_dir)
        if rows and "seed" in rows[0]:  # an anakin run's rows, one per agent: only its result tells them apart
            return []
        result = {"evaluations": evaluations_from_rows(rows)}
        if not result["evaluations"]:
            return []
    records = []
    for agent in result.get("agents") or [result]:
        own = dict(setting)
        for field in dict(sweep.grid):
            if field not in own and field in agent:  # the field an anakin run vmapped
                own[field] = _grid_text(sweep, field, agent[field])
        ordered = tuple((field, own[field]) for field in sweep.fields if field in own)
        evaluations = agent["evaluations"]
        records.append(
            RunRecord(
                ordered,
                int(agent.get("seed", trial["seeds"][0])),
                tuple(int(e[result.get("steps_key", "actor_steps")]) for e in evaluations),
                tuple(float(e["wall_seconds"]) for e in evaluations),
                tuple(float(e["mean_return"]) for e in evaluations),
                finished=finished,
            )
        )
    return records


def summarize(records: Sequence[RunRecord], target: float | None) -> list[SettingSummary]:
    """One summary per setting, in the order the settings first appear."""
    by_setting: dict[tuple, list[RunRecord]] = {}
    for record in records:
        if record.returns:
            by_setting.setdefault(record.setting, []).append(record)
    summaries = []
    for setting, runs in by_setting.items():
        runs = sorted(runs, key=lambda r: r.seed)
        reached = [
            next((s for s, r in zip(run.steps, run.returns) if r >= target), None) if target is not None else None
            for run in runs
        ]
        summaries.append(
            SettingSummary(
                dict(setting),
                [r.seed for r in runs],
                sum(r.finished for r in runs),
                _mean_std([r.returns[-1] for r in runs]),
                _mean_std([max(r.returns) for r in runs]),
                reached,
            )
        )
    return summaries


def best_setting(summaries: Sequence[SettingSummary]) -> SettingSummary:
    """The highest mean final return among settings whose every seed finished (among all if none did); ties go
    to the higher mean best return, then to more seeds reaching the target, then to fewer steps to reach it."""

    def rank(s: SettingSummary) -> tuple:
        reached = [x for x in s.steps_to_target if x is not None]
        return s.final[0], s.best[0], s.reached, -(sum(reached) / len(reached)) if reached else -math.inf

    complete = [s for s in summaries if s.finished == len(s.seeds)]
    return max(complete or summaries, key=rank)


def run_command(sweep: Sweep, setting: dict[str, str]) -> str:
    """The ``python -m baselines run`` command of one setting (as a sweep's trial runs it, less its seed and
    folders)."""
    words = ["python -m baselines run", sweep.agent, "--env", sweep.environment, *sweep.run_args]
    words += [f"--set {field}={value}" for field, value in setting.items()]
    return " ".join(words)


def _label(setting: dict[str, str]) -> str:
    return ", ".join(f"{field}={value}" for field, value in setting.items()) or "default"


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def plot_field(path: str, sweep: Sweep, summaries: Sequence[SettingSummary], field: str) -> str:
    """Final return (mean ± std over seeds) against ``field``'s values, one line per value of the other fields."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = [s.setting[field] for s in summaries if field in s.setting]
    numeric = all(_number(v) is not None for v in values)
    order = list(dict.fromkeys(sorted(values, key=lambda v: _number(v) if numeric else values.index(v))))
    figure, axis = plt.subplots(figsize=(6, 4))
    groups: dict[str, list[SettingSummary]] = {}
    for summary in summaries:
        others = {f: v for f, v in summary.setting.items() if f != field}
        groups.setdefault(_label(others) if others else "", []).append(summary)
    for index, (name, group) in enumerate(groups.items()):
        group = sorted(group, key=lambda s: order.index(s.setting[field]))
        xs = [_number(s.setting[field]) if numeric else order.index(s.setting[field]) for s in group]
        axis.errorbar(
            xs,
            [s.final[0] for s in group],
            yerr=[s.final[1] for s in group],
            marker="o",
            capsize=3,
            linestyle="-" if sweep.search == "grid" else "none",
            color=f"C{index % 10}",
            label=name or None,
        )
    if (
        numeric
        and min(_number(v) for v in order) > 0
        and max(_number(v) for v in order) > 10 * min(_number(v) for v in order)
    ):
        axis.set_xscale("log")
    if not numeric:
        axis.set_xticks(range(len(order)), order)
    axis.set_xlabel(field)
    axis.set_ylabel("final evaluation return (mean ± std over seeds)")
    axis.set_title(f"{sweep.agent} on {sweep.environment}")
    if any(groups):
        axis.legend(fontsize="small")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def report(sweep_dir: str, output_dir: str | None = None, target: float | None = None) -> list[str]:
    """Writes the sweep's report (README.md, plots, summary.json) to ``output_dir`` (``DIR/report``); returns the
    paths written."""
    from baselines.plotting import CurveGroup, plot_curve_groups

    sweep, state, records = load_runs(sweep_dir)
    if not records:
        raise ValueError(f"The sweep in {sweep_dir} has no evaluated run yet: nothing to report.")
    if target is None:
        baseline = registry.BASELINES.get((sweep.agent, sweep.environment))
        target = baseline.target_return if baseline is not None else None
    output_dir = output_dir or os.path.join(sweep_dir, "report")
    os.makedirs(output_dir, exist_ok=True)
    summaries = summarize(records, target)
    best = best_setting(summaries)
    wall = sum(session["wall_seconds"] for session in state.get("sessions", []))
    written = []
    for field in sweep.fields:
        written.append(plot_field(os.path.join(output_dir, f"return_vs_{field}.png"), sweep, summaries, field))
    groups = []
    for summary in summaries:
        runs = [r for r in records if dict(r.setting) == summary.setting and r.returns]
        groups.append(
            CurveGroup(
                _label(summary.setting), [r.steps for r in runs], [r.seconds for r in runs], [r.returns for r in runs]
            )
        )
    targets = {target: f"target {target:g}"} if target is not None else None
    curves = os.path.join(output_dir, "learning_curves.png")
    written.append(plot_curve_groups(curves, groups, title=f"{sweep.agent} on {sweep.environment}", targets=targets))

    header = "| setting | seeds | final return | best return |" + (
        " reached target | steps to target |" if target else ""
    )
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for s in sorted(summaries, key=lambda s: -s.final[0]):
        unfinished = len(s.seeds) - s.finished
        seeds = f"{len(s.seeds)}" + (f" ({unfinished} stopped early)" if unfinished else "")
        final, best_return = f"{s.final[0]:.1f} ± {s.final[1]:.1f}", f"{s.best[0]:.1f} ± {s.best[1]:.1f}"
        row = f"| {_label(s.setting)} | {seeds} | {final} | {best_return} |"
        if target is not None:
            reached = [x for x in s.steps_to_target if x is not None]
            mean_steps = f"{sum(reached) / len(reached):,.0f}" if reached else "-"
            row += f" {s.reached}/{len(s.seeds)} | {mean_steps} |"
        lines.append(row)
    text = [
        f"# Sweep: {sweep.agent} on {sweep.environment}",
        "",
        f"Command: `{' '.join(state['command'])}`",
        "",
        f"{len(summaries)} settings, {len(records)} runs ({sum(r.finished for r in records)} finished); "
        f"wall-clock {wall:,.0f} s over {len(state.get('sessions', []))} session(s) of the sweep command.",
        "",
        "Final return: the last evaluation's mean return; best: the highest; mean ± std over seeds."
        + (
            f" Steps to target: the first evaluation at or above {target:g} (mean over the seeds that reached it)."
            if target is not None
            else ""
        ),
        "",
        *lines,
        "",
        f"**Best setting: {_label(best.setting)}** (final {best.final[0]:.1f} ± {best.final[1]:.1f} over "
        f"{len(best.seeds)} seeds):",
        "",
        "```bash",
        run_command(sweep, best.setting) + " --seed SEED",
        "```",
        "",
        *[f"![return against {field}](return_vs_{field}.png)" for field in sweep.fields],
        "",
        "![learning curves](learning_curves.png)",
        "",
    ]
    readme = os.path.join(output_dir, "README.md")
    with open(readme, "w") as f:
        f.write("\n".join(text))
    summary_path = os.path.join(output_dir, "summary.json")
    with open(summary_path, "w") as f:
        json.dump(
            {
                "sweep": sweep.as_dict(),
                "target": target,
                "wall_seconds": wall,
                "best": dataclasses.asdict(best),
                "settings": [dataclasses.asdict(s) for s in summaries],
            },
            f,
            indent=2,
        )
    return [readme, *written, summary_path]
