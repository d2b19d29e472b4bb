"""``python -m baselines report``: the results tables and learning-curve plots, regenerated from the records.

python -m baselines report
    reads baselines/results/runs/, writes baselines/results/README.md, baselines/results/plots/*.png
    and the README's results section (between its two report markers)
python -m baselines report --runs runs/ --against sac:gymnasium:Pendulum-v1
    draws your runs (``python -m baselines run`` folders or records) against that baseline's seeds,
    into runs/report/
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Iterable, Sequence

import numpy as np

from baselines import aggregate, plotting, registry, results
from baselines.references import REFERENCES, Reference

REPOSITORY_README = os.path.join(os.path.dirname(os.path.dirname(results.RESULTS_DIR)), "README.md")
START_MARKER = "<!-- baselines report: start (python -m baselines report writes this section; edit the code) -->"
END_MARKER = "<!-- baselines report: end -->"


@dataclasses.dataclass(frozen=True)
class SeedRun:
    """One seed's evaluation curve: returns at actor steps, and the wall-clock seconds of each evaluation.

    ``seconds_estimated`` marks a record made before records kept each evaluation's time: its times are
    placed at the run's mean rate (its wall seconds over its actor steps).
    """

    agent: str
    environment: str
    seed: int
    steps: tuple[int, ...]
    returns: tuple[float, ...]
    seconds: tuple[float, ...]
    actor_steps: int
    wall_seconds: float
    seconds_estimated: bool = False
    date: str | None = None
    machine: dict | None = None
    versions: dict | None = None

    @classmethod
    def from_record(cls, record: dict) -> "SeedRun":
        """From a per-seed record (``baselines reproduce``'s format)."""
        steps = tuple(int(step) for step, _ in record["curve"])
        returns = tuple(float(value) for _, value in record["curve"])
        seconds = record.get("curve_seconds")
        estimated = seconds is None
        if estimated:
            rate = record["wall_seconds"] / max(record["actor_steps"], 1)
            seconds = [step * rate for step in steps]
        return cls(
            agent=record["agent"],
            environment=record["environment"],
            seed=int(record["seed"]),
            steps=steps,
            returns=returns,
            seconds=tuple(float(s) for s in seconds),
            actor_steps=int(record["actor_steps"]),
            wall_seconds=float(record["wall_seconds"]),
            seconds_estimated=estimated,
            date=record.get("date"),
            machine=record.get("machine"),
            versions=record.get("versions"),
        )

    @classmethod
    def from_result(cls, result: dict) -> "SeedRun":
        """From the ``result.json`` a ``python -m baselines run`` folder holds."""
        evaluations = result["evaluations"]
        counted = result.get("steps_key", "actor_steps")  # learner steps for a run from a dataset
        return cls(
            agent=result["agent"],
            environment=result["environment"],
            seed=int(result["seed"]),
            steps=tuple(int(e[counted]) for e in evaluations),
            returns=tuple(float(e["mean_return"]) for e in evaluations),
            seconds=tuple(float(e["wall_seconds"]) for e in evaluations),
            actor_steps=int(result[counted]),
            wall_seconds=float(result["wall_seconds"]),
        )

    def first_at(self, target: float) -> int | None:
        """The index of the first evaluation at or above ``target``, or None."""
        return next((i for i, value in enumerate(self.returns) if value >= target), None)


def load_records(runs_dir: str = results.RUNS_DIR) -> list[SeedRun]:
    """The per-seed records in ``runs_dir`` (records without evaluations are left out)."""
    return [SeedRun.from_record(record) for record in results.load_records(runs_dir) if record.get("curve")]


def load_user_runs(directory: str) -> list[SeedRun]:
    """A user's runs under ``directory``: ``python -m baselines run`` folders (their ``result.json``) and
    per-seed records, at any depth. Raises ``ValueError`` when there are none."""
    if not os.path.isdir(directory):
        raise ValueError(f"--runs {directory}: no such directory.")
    runs = []
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            with open(os.path.join(root, name)) as f:
                try:
                    content = json.load(f)
                except json.JSONDecodeError:
                    continue
            if not isinstance(content, dict):
                continue
            if name == "result.json" and content.get("evaluations"):
                runs.append(SeedRun.from_result(content))
            elif content.get("curve") and "agent" in content:
                runs.append(SeedRun.from_record(content))
    if not runs:
        raise ValueError(
            f"--runs {directory} holds no run with evaluations: give a folder of `python -m baselines run` "
            "run folders (each with its result.json) or of per-seed records."
        )
    return runs


@dataclasses.dataclass(frozen=True)
class ResultRow:
    """The figures over seeds of one (agent, environment): a registered baseline's, or a user's runs'."""

    label: str
    agent: str
    environment: str
    target: float
    budget: int | None
    runs: tuple[SeedRun, ...]
    reference: Reference | None = None

    @property
    def seeds_at_target(self) -> int:
        return sum(run.first_at(self.target) is not None for run in self.runs)

    def final_returns(self) -> list[float]:
        return [run.returns[-1] for run in self.runs]

    def best_returns(self) -> list[float]:
        return [max(run.returns) for run in self.runs]

    def steps_to_target(self) -> list[int | None]:
        firsts = [run.first_at(self.target) for run in self.runs]
        return [None if i is None else run.steps[i] for i, run in zip(firsts, self.runs)]

    def median_steps_to_target(self) -> float | None:
        reached = [s for s in self.steps_to_target() if s is not None]
        return float(np.median(reached)) if reached else None

    def held(self) -> tuple[int, int]:
        """(later evaluations at the target, later evaluations): over the seeds that reached it, the evaluations
        after the first one at the target."""
        at, total = 0, 0
        for run in self.runs:
            first = run.first_at(self.target)
            if first is not None:
                later = run.returns[first + 1 :]
                at += sum(value >= self.target for value in later)
                total += len(later)
        return at, total

    def steps_per_second(self) -> list[float]:
        return [run.actor_steps / run.wall_seconds for run in self.runs if run.wall_seconds > 0]

    def rate_cell(self) -> str:
        """The mean steps/s, with the accelerator the runs had where they had one (a GPU's rate is not a core's)."""
        rates = self.steps_per_second()
        if not rates:
            return "-"
        devices = sorted({(run.machine or {}).get("device") or "CPU" for run in self.runs})
        return f"{np.mean(rates):,.0f}" + ("" if devices == ["CPU"] else f" ({', '.join(devices)})")


def _mean_std(values: Sequence[float]) -> str:
    return f"{np.mean(values):.1f} ± {np.std(values):.1f}" if values else "-"


def _thousands(steps: float) -> str:
    return f"{steps / 1000:g}k" if steps >= 1000 else f"{steps:g}"


def _reference_cell(reference: Reference | None) -> str:
    if reference is None:
        return "-"
    return f"{reference.library}: {reference.figure} at {_thousands(reference.timesteps)} ([source]({reference.url}))"


TABLE_HEADER = (
    "| agent | environment | budget | target | seeds at target | final return | best return "
    "| median steps to target | held after target | steps/s | reference |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def table_line(row: ResultRow) -> str:
    """One markdown table line: figures over seeds as mean ± std (population std)."""
    budget = _thousands(row.budget) if row.budget else "-"
    if not row.runs:
        cells = ["no records"] + ["-"] * 5
    else:
        median = row.median_steps_to_target()
        at, total = row.held()
        cells = [
            f"{row.seeds_at_target}/{len(row.runs)}",
            _mean_std(row.final_returns()),
            _mean_std(row.best_returns()),
            "-" if median is None else f"{median:,.0f}",
            f"{at}/{total} ({100 * at / total:.0f}%)" if total else "-",
            row.rate_cell(),
        ]
    return (
        f"| {row.label} | {row.environment} | {budget} | {row.target:g} | " + " | ".join(cells) + f" | "
        f"{_reference_cell(row.reference)} |"
    )


def results_table(rows: Iterable[ResultRow]) -> str:
    return "\n".join([TABLE_HEADER, *(table_line(row) for row in rows)])


def per_seed_table(rows: Iterable[ResultRow]) -> str:
    lines = [
        "| agent | environment | seed | steps to target | best | final | held after target | wall s | steps/s | date |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for run, to_target in zip(row.runs, row.steps_to_target()):
            single = dataclasses.replace(row, runs=(run,))
            at, total = single.held()
            lines.append(
                f"| {row.label} | {row.environment} | {run.seed} | {'-' if to_target is None else f'{to_target:,}'} "
                f"| {max(run.returns):.1f} | {run.returns[-1]:.1f} | {f'{at}/{total}' if total else '-'} "
                f"| {run.wall_seconds:.0f} | {single.rate_cell()} | {run.date or '-'} |"
            )
    return "\n".join(lines)


def baseline_rows(records: Sequence[SeedRun]) -> list[ResultRow]:
    """One row per registered baseline (those without records too), by environment then agent."""
    rows = []
    for (agent, environment), baseline in sorted(registry.BASELINES.items(), key=lambda item: item[0][::-1]):
        runs = tuple(sorted((r for r in records if (r.agent, r.environment) == (agent, environment)), key=_seed))
        rows.append(
            ResultRow(
                f"{agent} (anakin)" if baseline.launcher == "anakin" else agent,  # trained on the device
                agent,
                environment,
                baseline.target_return,
                baseline.max_steps,
                runs,
                REFERENCES.get((agent, environment)),
            )
        )
    return rows


def _seed(run: SeedRun) -> int:
    return run.seed


def user_rows(runs: Sequence[SeedRun], against: tuple[str, str] | None) -> list[ResultRow]:
    """Rows of a user's runs, grouped by (agent, environment): with ``against``, only the runs on its
    environment, measured against its target; otherwise each against its own pair's registered target."""
    if against is not None:
        runs = [run for run in runs if run.environment == against[1]]
    groups: dict[tuple[str, str], list[SeedRun]] = {}
    for run in runs:
        groups.setdefault((run.agent, run.environment), []).append(run)
    rows = []
    for (agent, environment), group in sorted(groups.items()):
        baseline = registry.BASELINES.get(against or (agent, environment))
        if baseline is None:
            continue
        rows.append(
            ResultRow(
                f"yours: {agent}", agent, environment, baseline.target_return, None, tuple(sorted(group, key=_seed))
            )
        )
    return rows


def parse_against(value: str) -> tuple[str, str]:
    """``"sac:gymnasium:Pendulum-v1"`` -> ``("sac", "gymnasium:Pendulum-v1")``, a registered baseline."""
    agent, _, environment = value.partition(":")
    if (agent, environment) not in registry.BASELINES:
        known = ", ".join(f"{a}:{e}" for a, e in sorted(registry.BASELINES))
        raise ValueError(f"--against {value!r} is not a registered baseline; give AGENT:ENVIRONMENT, one of: {known}.")
    return agent, environment


def plot_paths(rows: Sequence[ResultRow], plots_dir: str) -> dict[str, str]:
    """{environment: the PNG write_plots draws its runs in}, for each environment with runs."""
    environments = sorted({row.environment for row in rows if row.runs})
    return {
        environment: os.path.join(plots_dir, f"{results.safe_name(environment)}.png") for environment in environments
    }


def write_plots(rows: Sequence[ResultRow], plots_dir: str) -> dict[str, str]:
    """One PNG per environment with runs: returns against actor steps and against wall-clock seconds,
    a line per row (mean over seeds, a band of ± one standard deviation) and the targets dashed.
    Returns {environment: path}."""
    paths = plot_paths(rows, plots_dir)
    for environment, path in paths.items():
        drawn = [row for row in rows if row.environment == environment and row.runs]
        groups = [
            plotting.CurveGroup(
                label=f"{row.label} ({len(row.runs)} seed{'s' if len(row.runs) > 1 else ''})",
                steps=[run.steps for run in row.runs],
                seconds=[run.seconds for run in row.runs],
                returns=[run.returns for run in row.runs],
                seconds_estimated=any(run.seconds_estimated for run in row.runs),
            )
            for row in drawn
        ]
        targets = sorted({row.target for row in drawn})
        labels = {
            value: f"target {value:g}"
            + ("" if len(targets) == 1 else f" ({', '.join(r.label for r in drawn if r.target == value)})")
            for value in targets
        }
        paths[environment] = plotting.plot_curve_groups(path, groups, title=environment, targets=labels)
    return paths


def versions_section(runs: Sequence[SeedRun]) -> str:
    """Which machines and package versions produced the records, grouped by identical settings."""
    groups: dict[str, list[SeedRun]] = {}
    for run in runs:
        key = json.dumps({"machine": run.machine or {}, "versions": run.versions or {}}, sort_keys=True)
        groups.setdefault(key, []).append(run)
    lines = []
    for key, group in sorted(groups.items(), key=lambda item: min(r.date or "" for r in item[1])):
        setting = json.loads(key)
        machine, versions = setting["machine"], setting["versions"]
        pairs = sorted({f"{r.agent} on {r.environment}" for r in group})
        dates = sorted({r.date for r in group if r.date})
        where = ", ".join(f"{k} {v}" for k, v in machine.items()) or "not recorded"
        packages = ", ".join(f"{k} {v}" for k, v in versions.items() if k != "python") or (
            "not recorded (records made before package versions were kept)"
        )
        made = " to ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "on an unrecorded date"
        lines.append(
            f"- {len(group)} records ({'; '.join(pairs)}), made {made}: machine: {where}; packages: {packages}."
        )
    return "\n".join(lines)


def _plots_markdown(paths: dict[str, str], relative_to: str) -> str:
    return "\n\n".join(
        f"![{environment}]({os.path.relpath(path, relative_to).replace(os.sep, '/')})"
        for environment, path in paths.items()
    )


def _estimated_note(rows: Sequence[ResultRow]) -> str:
    runs = [run for row in rows for run in row.runs]
    estimated = [run for run in runs if run.seconds_estimated]
    if not estimated:
        return ""
    pairs = sorted({f"{run.agent} on {run.environment}" for run in estimated})
    return (
        f"\n\nWall-clock panels: {len(estimated)} of {len(runs)} records predate per-evaluation times "
        f"({', '.join(pairs)}); their evaluations are placed at the run's mean rate (its wall seconds over its "
        'steps), and their legend says "time estimated".'
    )


TABLE_NOTES = (
    "Figures over seeds are mean ± std (population). Final: the last evaluation; best: the best evaluation; "
    "held after target: of the evaluations after a seed first reached the target, how many were at it too. "
    "Steps/s: actor steps over the run's wall-clock, evaluation included, on whatever machine and load the "
    "run had (see the records' machines below); runs on an accelerator name it beside the rate. Reference: a "
    "published figure of a well-known library for the "
    "same algorithm and environment, at the budget it states, which may differ from ours; RL Zoo's is one trained "
    "agent's final return, its spread over evaluation episodes rather than seeds. A pair without one has none "
    "published for the same algorithm (D4PG, MPO, IMPALA, R2D2 and dm_control swingup are not in RL Zoo's table)."
)


def readme_section(rows: Sequence[ResultRow], plot_paths: dict[str, str], relative_to: str) -> str:
    """The repository README's results section: the table, the notes and the plots."""
    return "\n\n".join(
        [
            results_table(rows),
            TABLE_NOTES + _estimated_note(rows),
            "Per-seed figures, and the machines and versions behind each record: `baselines/results/README.md`.",
            _plots_markdown(plot_paths, relative_to),
        ]
    )


def aggregate_entries(rows: Sequence[ResultRow]) -> list[aggregate.TaskRuns]:
    """Each row's final returns, by the row's label (which keeps a launcher's runs apart), for the aggregate, with
    its reference's figure where that was published at the row's budget."""
    entries = []
    for row in rows:
        if not row.runs:
            continue
        reference = row.reference if row.reference and row.reference.timesteps == row.budget else None
        published = {} if reference is None else dict(published=reference.value, published_by=reference.library)
        entries.append(aggregate.TaskRuns(row.label, row.environment, tuple(row.final_returns()), **published))
    return entries


def write_aggregate(rows: Sequence[ResultRow], output_dir: str) -> tuple[str, dict[str, str]]:
    """The "Aggregate statistics (rliable)" section of ``rows`` and its performance-profile plots (one per suite,
    in ``output_dir``/plots/): (section, {suite: path})."""
    suites, left_out = aggregate.aggregate(aggregate_entries(rows))
    paths = aggregate.write_plots(suites, os.path.join(output_dir, "plots"))
    return aggregate.section(suites, left_out, paths, output_dir), paths


def results_readme(
    rows: Sequence[ResultRow],
    plot_paths: dict[str, str],
    output_dir: str,
    title: str,
    offline: str = "",
    aggregate_section: str = "",
) -> str:
    """The full report: table, ``aggregate_section`` (``write_aggregate``'s) where given, per-seed table, plots, the
    records' machines and versions, and ``offline`` (the offline baselines' section,
    ``baselines.offline.offline_section``) where given."""
    runs = [run for row in rows for run in row.runs]
    return (
        "\n\n".join(
            [
                f"# {title}",
                "Written by `python -m baselines report` from the per-seed records; regenerate it rather than "
                "editing it.",
                "## Over seeds",
                results_table(rows),
                TABLE_NOTES + _estimated_note(rows),
                *(["## Aggregate statistics (rliable)", aggregate_section] if aggregate_section else []),
                "## Per seed",
                per_seed_table(rows),
                "## Learning curves",
                _plots_markdown(plot_paths, output_dir),
                "## Machines and versions",
                versions_section(runs),
                *(["## Offline", offline] if offline else []),
            ]
        )
        + "\n"
    )


def replace_section(text: str, content: str) -> str:
    """``text`` with what lies between START_MARKER and END_MARKER replaced by ``content``."""
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < 0 or end < start or text.count(START_MARKER) != 1 or text.count(END_MARKER) != 1:
        raise ValueError(
            f"the README needs exactly one {START_MARKER!r} line followed by one {END_MARKER!r} line around "
            "the section the report writes."
        )
    return text[: start + len(START_MARKER)] + "\n\n" + content + "\n\n" + text[end:]


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def report(
    records_dir: str = results.RUNS_DIR,
    output_dir: str = results.RESULTS_DIR,
    readme: str | None = REPOSITORY_README,
    runs_dir: str | None = None,
    against: str | None = None,
) -> list[str]:
    """Writes the report (``output_dir``/README.md and ``output_dir``/plots/) and, with ``readme``, that
    file's section between the markers; with ``runs_dir``, the user's runs are drawn beside the baselines
    (``against``: only that baseline). Returns the paths written."""
    records = load_records(records_dir)
    rows = baseline_rows(records)
    title = "Baseline results"
    if against is not None and runs_dir is None:
        raise ValueError("--against draws your runs against a baseline: give them with --runs DIR.")
    if runs_dir is not None:
        pair = parse_against(against) if against is not None else None
        user_runs = load_user_runs(runs_dir)
        mine = user_rows(user_runs, pair)
        if not mine:
            found = ", ".join(sorted({f"{r.agent} on {r.environment}" for r in user_runs}))
            wanted = f"on {pair[1]}" if pair else "of a registered baseline's agent and environment"
            raise ValueError(f"--runs {runs_dir} holds no run {wanted}; its runs are: {found}.")
        compared = {pair} if pair else {(row.agent, row.environment) for row in mine}
        rows = [row for row in rows if (row.agent, row.environment) in compared] + mine
        title = f"Your runs ({runs_dir}) against the baselines"
    plot_paths = write_plots(rows, os.path.join(output_dir, "plots"))
    aggregate_section, profile_paths = write_aggregate(rows, output_dir)
    readme_path = os.path.join(output_dir, "README.md")
    from baselines.offline import offline_section

    offline = offline_section() if runs_dir is None else ""
    _write(readme_path, results_readme(rows, plot_paths, output_dir, title, offline, aggregate_section))
    written = [readme_path, *plot_paths.values(), *profile_paths.values()]
    if readme is not None:
        with open(readme) as f:
            text = f.read()
        _write(
            readme, replace_section(text, readme_section(rows, plot_paths, os.path.dirname(os.path.abspath(readme))))
        )
        written.append(readme)
    return written
