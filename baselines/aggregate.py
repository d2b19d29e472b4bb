"""Statistics over seeds and tasks as the field reports them (Agarwal et al., 2021), computed with ``rliable``.

For each suite of tasks (``suite_of``) and each agent with runs in it: the interquartile mean (IQM) of its runs'
normalised final returns over seeds and tasks, with a 95% stratified bootstrap confidence interval (runs resampled
within each task), the mean normalised score, and the performance profile (the fraction of runs whose normalised
score is above a threshold tau). Scores are normalised per task by ``baselines.normalisation``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import sys
from typing import Iterator, Sequence

import numpy as np

from baselines import normalisation

# The suites, in the order the report lists them; suite_of says which one an environment id belongs to.
SUITES = ("classic control", "MinAtar", "dm_control", "MuJoCo Playground", "bsuite", "Atari", "memory", "Craftax")
# gymnasium's classic-control tasks (gymnasium.envs.classic_control), which the jax: family also has twins of.
CLASSIC_CONTROL = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")

BOOTSTRAP_REPS = 2_000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
TAU_POINTS = 101
RLIABLE_VERSION = "1.2.0"


def suite_of(environment_id: str) -> str:
    """The suite ``environment_id`` belongs to: classic control (gymnasium's and their jax: twins), MinAtar
    (``jax:MinAtar-*``), dm_control, MuJoCo Playground (``playground:*``, on MJX: apart from dm_control's own),
    bsuite (``bsuite:*`` and ``jax:catch``), Atari, memory (a classic task with part of its observation hidden:
    ``memory:*`` and its jax: twins ``jax:Memory*``) or Craftax. ``ValueError`` for an id of none of them."""
    prefix, _, name = environment_id.partition(":")
    if prefix in ("gymnasium", "jax") and name in CLASSIC_CONTROL:
        return "classic control"
    if prefix == "jax" and name.startswith("MinAtar-"):
        return "MinAtar"
    if prefix == "dm_control":
        return "dm_control"
    if prefix == "playground":
        return "MuJoCo Playground"
    if prefix == "bsuite" or (prefix == "jax" and name == "catch"):
        return "bsuite"
    if prefix == "atari":
        return "Atari"
    if prefix == "memory" or (prefix == "jax" and name.startswith("Memory")):
        return "memory"
    if prefix == "craftax":
        return "Craftax"
    raise ValueError(
        f"{environment_id} is in no suite: suites are classic control (gymnasium: or jax: with one of "
        f"{', '.join(CLASSIC_CONTROL)}), MinAtar (jax:MinAtar-*), dm_control:*, playground:*, bsuite:* (and "
        "jax:catch), atari:*, memory:* (and jax:Memory*) and craftax:*; add its family to baselines/aggregate.py's "
        "suite_of."
    )


@dataclasses.dataclass(frozen=True)
class TaskRuns:
    """One agent's runs on one task: their final returns, in seed order, and where a library publishes one for the
    same algorithm, task and budget, its figure (``published``, a return) and who published it (``published_by``)."""

    agent: str
    environment: str
    returns: tuple[float, ...]
    published: float | None = None
    published_by: str = ""


@dataclasses.dataclass(frozen=True)
class PublishedStatistics:
    """The aggregate of a library's published figures on the tasks an agent has in a suite (one figure per task,
    so no interval): only where every one of those tasks has a figure from the same library."""

    agent: str  # the agent it stands beside
    library: str
    tasks: tuple[str, ...]
    scores: np.ndarray  # (1, tasks)
    iqm: float
    mean: float


@dataclasses.dataclass(frozen=True)
class AgentStatistics:
    """One agent's aggregate over a suite's tasks. ``scores`` is the (runs, tasks) matrix of normalised scores:
    ``runs`` per task, the fewest any of its tasks has (the first in seed order where a task has more)."""

    agent: str
    tasks: tuple[str, ...]
    scores: np.ndarray
    most_runs: int  # the most runs any of its tasks has
    iqm: float
    iqm_interval: tuple[float, float]
    mean: float
    mean_interval: tuple[float, float]
    profile: np.ndarray  # at the suite's taus
    profile_interval: np.ndarray  # (2, taus): lower and upper bounds

    @property
    def runs(self) -> int:
        return self.scores.shape[0]


@dataclasses.dataclass(frozen=True)
class SuiteStatistics:
    suite: str
    taus: np.ndarray
    agents: tuple[AgentStatistics, ...]
    published: tuple[PublishedStatistics, ...] = ()


def _rliable():
    """rliable's ``library`` and ``metrics`` modules.

    rliable 1.2.0 needs arch < 8 (arch 8 dropped the ``random_state`` argument rliable passes), and arch 7.x calls
    pandas' private ``deprecate_kwarg`` decorator as pandas 2 took it; pandas 3, which both stacks pin, put the
    warning class first, so ``import arch`` fails there with a TypeError. While arch is first imported, the
    decorator takes the old form too (with FutureWarning, what pandas 2 used) and is put back after. The decorator
    only marks a keyword of arch's GARCH plots deprecated, which nothing here uses.
    """
    if "arch" not in sys.modules:
        with _pandas_2_deprecate_kwarg():
            try:
                import arch.bootstrap  # noqa: F401
            except ImportError as error:
                raise ImportError(
                    f"The report's aggregate statistics need rliable {RLIABLE_VERSION} and arch 7 ({error}): "
                    f"`pip install rliable=={RLIABLE_VERSION}` (make install installs them)."
                ) from error
    from rliable import library, metrics

    return library, metrics


@contextlib.contextmanager
def _pandas_2_deprecate_kwarg() -> Iterator[None]:
    try:
        from pandas.util import _decorators
    except ImportError:  # pragma: no cover - pandas comes with rliable
        yield
        return
    original = _decorators.deprecate_kwarg
    if next(iter(inspect.signature(original).parameters)) != "klass":
        yield  # pandas 2: arch 7 calls it as it expects
        return

    def deprecate_kwarg(*args, **kwargs):
        if args and isinstance(args[0], str):  # (old_arg_name, new_arg_name, ...): pandas 2's form
            args = (FutureWarning, *args)
        return original(*args, **kwargs)

    _decorators.deprecate_kwarg = deprecate_kwarg
    try:
        yield
    finally:
        _decorators.deprecate_kwarg = original


@contextlib.contextmanager
def _seeded_numpy(seed: int) -> Iterator[None]:
    """numpy's global generator seeded with ``seed``, then put back: rliable's stratified bootstrap draws its
    resamples from it (``np.random.choice``), whatever ``random_state`` it is given."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _profile(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """The fraction of runs (of all tasks) whose score is above each tau: rliable's score distribution
    (``library.run_score_deviation`` at each tau), in one comparison."""
    return np.mean(np.reshape(scores, (-1, 1)) > np.reshape(taus, (1, -1)), axis=0)


def interval_estimates(
    scores: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """rliable's IQM and mean of a (runs, tasks) score matrix, and their ``CONFIDENCE`` stratified bootstrap
    intervals (percentile method, ``reps`` resamples from ``seed``): ([iqm, mean], [[low, low], [high, high]])."""
    library, metrics = _rliable()

    def iqm_and_mean(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x)])

    with _seeded_numpy(seed):
        points, intervals = library.get_interval_estimates(
            {"agent": scores}, iqm_and_mean, reps=reps, confidence_interval_size=CONFIDENCE
        )
    return points["agent"], intervals["agent"]


def performance_profile(
    scores: np.ndarray, taus: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """rliable's performance profile of a (runs, tasks) score matrix at ``taus`` and its bootstrap band."""
    library, _ = _rliable()
    with _seeded_numpy(seed):
        profiles, intervals = library.create_performance_profile(
            {"agent": scores}, taus, custom_profile_func=_profile, reps=reps, confidence_interval_size=CONFIDENCE
        )
    return profiles["agent"], intervals["agent"]


def published_statistics(agent: str, figures: dict[str, tuple[str, float]]) -> PublishedStatistics | None:
    """rliable's IQM and mean of the published figures ``figures`` ({task: (library, return)}) of the tasks ``agent``
    has in a suite, normalised as the runs are; None where a task has none or the tasks' libraries differ."""
    libraries = {library for library, _ in figures.values()}
    if not figures or None in libraries or len(libraries) != 1:
        return None
    _, metrics = _rliable()
    tasks = tuple(sorted(figures))
    scores = np.array([[normalisation.normalise(task, [figures[task][1]])[0] for task in tasks]])
    return PublishedStatistics(
        agent, libraries.pop(), tasks, scores, float(metrics.aggregate_iqm(scores)), float(np.mean(scores))
    )


def _taus(scores: Sequence[np.ndarray]) -> np.ndarray:
    """``TAU_POINTS`` thresholds from 0 (or the lowest score, below it) to 1.5 (or the highest score, above it),
    the ends rounded outwards to tenths."""
    values = np.concatenate([s.ravel() for s in scores])
    low = min(0.0, float(np.floor(values.min() * 10) / 10))
    high = max(1.5, float(np.ceil(values.max() * 10) / 10))
    return np.linspace(low, high, TAU_POINTS)


def aggregate(
    entries: Sequence[TaskRuns], reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[list[SuiteStatistics], list[str]]:
    """The statistics of each suite with runs, and the tasks left out for having no normaliser
    (``normalisation.scale_of``). Entries without runs are ignored; every agent's bootstrap starts from ``seed``."""
    by_suite: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    published: dict[str, dict[str, tuple]] = {}  # {agent: {task: (library, return) or (None, None)}}
    left_out = set()
    for entry in entries:
        if not entry.returns:
            continue
        try:
            scores = normalisation.normalise(entry.environment, entry.returns)
        except normalisation.NoScaleError:
            left_out.add(entry.environment)
            continue
        agents = by_suite.setdefault(suite_of(entry.environment), {})
        agents.setdefault(entry.agent, {})[entry.environment] = scores
        figure = (entry.published_by, entry.published) if entry.published is not None else (None, None)
        published.setdefault(entry.agent, {})[entry.environment] = figure
    suites = []
    for suite in SUITES:
        agents = by_suite.get(suite)
        if not agents:
            continue
        matrices = {}
        for agent, tasks in agents.items():
            runs = min(len(s) for s in tasks.values())
            names = tuple(sorted(tasks))
            matrices[agent] = (names, np.stack([tasks[name][:runs] for name in names], axis=1), tasks)
        taus = _taus([m for _, m, _ in matrices.values()])
        statistics = []
        for agent, (names, matrix, tasks) in matrices.items():
            points, intervals = interval_estimates(matrix, reps, seed)
            profile, band = performance_profile(matrix, taus, reps, seed)
            statistics.append(
                AgentStatistics(
                    agent,
                    names,
                    matrix,
                    max(len(s) for s in tasks.values()),
                    float(points[0]),
                    (float(intervals[0, 0]), float(intervals[1, 0])),
                    float(points[1]),
                    (float(intervals[0, 1]), float(intervals[1, 1])),
                    profile,
                    band,
                )
            )
        figures = (
            published_statistics(agent, {task: published[agent][task] for task in names})
            for agent, (names, _, _) in sorted(matrices.items())
        )
        suites.append(
            SuiteStatistics(
                suite,
                taus,
                tuple(sorted(statistics, key=lambda s: s.agent)),
                tuple(figure for figure in figures if figure is not None),
            )
        )
    return suites, sorted(left_out)


def plot_name(suite: str) -> str:
    """``rliable_classic_control.png``: the file a suite's performance profiles are drawn in."""
    return "rliable_" + suite.replace(" ", "_") + ".png"


def write_plots(suites: Sequence[SuiteStatistics], plots_dir: str) -> dict[str, str]:
    """One PNG of performance profiles per suite; returns {suite: path}."""
    from baselines import plotting

    return {
        suite.suite: plotting.plot_performance_profiles(
            os.path.join(plots_dir, plot_name(suite.suite)),
            suite.taus,
            {agent.agent: (agent.profile, agent.profile_interval) for agent in suite.agents},
            title=f"{suite.suite}: performance profiles",
        )
        for suite in suites
    }


def _interval(point: float, interval: tuple[float, float]) -> str:
    return f"{point:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def section(suites: Sequence[SuiteStatistics], left_out: Sequence[str], plots: dict[str, str], relative_to: str) -> str:
    """The report's "Aggregate statistics (rliable)" section (without its heading): the table, the normalisers
    it used, and the performance profiles' plots (``plots``: {suite: path}, linked relative to ``relative_to``)."""
    if not suites:
        missing = f" (no normaliser for {', '.join(left_out)})" if left_out else ""
        return f"No runs to aggregate{missing}."
    lines = [
        "| suite | agent | tasks | seeds | IQM [95% CI] | mean normalised score [95% CI] |",
        "|---|---|---|---|---|---|",
    ]
    for suite in suites:
        for agent in suite.agents:
            seeds = f"{agent.runs}" + (
                f" (first {agent.runs} of up to {agent.most_runs})" if agent.most_runs > agent.runs else ""
            )
            lines.append(
                f"| {suite.suite} | {agent.agent} | {len(agent.tasks)}: {', '.join(agent.tasks)} | {seeds} "
                f"| {_interval(agent.iqm, agent.iqm_interval)} | {_interval(agent.mean, agent.mean_interval)} |"
            )
            for figures in (figures for figures in suite.published if figures.agent == agent.agent):
                lines.append(
                    f"| {suite.suite} | {figures.agent}'s published peer: {figures.library} | {len(figures.tasks)}: "
                    f"{', '.join(figures.tasks)} | one figure per task | {figures.iqm:.2f} | {figures.mean:.2f} |"
                )
    used = sorted({task for suite in suites for agent in suite.agents for task in agent.tasks})
    scales = [
        "| task | suite | random policy's return (± s.e.) | target | target from |",
        "|---|---|---|---|---|",
        *(
            f"| {task} | {suite_of(task)} | {s.random_return:.2f} ± {s.random_stderr:.2f} | {s.target_return:g} "
            f"| {s.target_source} |"
            for task, s in ((task, normalisation.scale_of(task)) for task in used)
        ),
    ]
    notes = (
        f'Computed with rliable {RLIABLE_VERSION} (Agarwal et al., 2021, "Deep Reinforcement Learning at the Edge '
        "of the Statistical Precipice\"). A run's score is its final return (the last evaluation), normalised per "
        "task: (final return - random) / (target - random), so 0 is the uniform random policy's mean return on the "
        "task and 1 the task's target (the table below). IQM: the mean of the middle half of an agent's runs over "
        "seeds and tasks (the lowest and highest quarter, int(n/4) runs each, left out; with fewer than 4 runs it is "
        f"their mean). Intervals: {CONFIDENCE:.0%} stratified bootstrap (percentile) over runs, resampled within "
        f"each task; {BOOTSTRAP_REPS:,} resamples from seed {BOOTSTRAP_SEED}. Where an agent's tasks have different "
        "numbers of seeds, each task contributes the fewest any has, the first in seed order. An agent's label keeps "
        "the launcher apart (dqn and dqn (anakin) are separate agents). A published peer's row: where a library "
        "publishes a figure for the same algorithm and budget on every task an agent has in the suite (the results "
        "table's reference column), those figures normalised the same way, one per task, so without an interval."
    )
    random_note = (
        f"Random policy: uniformly random actions in the action spec's bounds, mean undiscounted return over "
        f"{normalisation.RANDOM_EPISODES:,} episodes of the environment an evaluator plays, seed "
        f"{normalisation.RANDOM_SEED} (`python -m baselines.normalisation ID` measures it)."
    )
    if left_out:
        random_note += (
            f" Left out for want of a random-policy return and target in baselines/normalisation.py: "
            f"{', '.join(left_out)}."
        )
    profile_note = (
        "Performance profiles: the fraction of an agent's runs (over seeds and tasks) whose normalised score is "
        f"above tau, with its {CONFIDENCE:.0%} bootstrap band; one plot per suite."
    )
    pictures = "\n\n".join(
        f"![{suite} performance profiles]({os.path.relpath(path, relative_to).replace(os.sep, '/')})"
        for suite, path in plots.items()
    )
    parts = ["\n".join(lines), notes, "\n".join(scales), random_note, profile_note]
    return "\n\n".join([*parts, pictures] if pictures else parts)
