"""``python -m baselines sweep``: hyper-parameter sweeps and many-seed experiments on Ray Tune.

    python -m baselines sweep dqn --env gymnasium:CartPole-v1 --grid learning_rate=1e-4,3e-4,1e-3 --seeds 0 1 2 \\
        --max-steps 50000 --run-dir runs/sweeps/dqn-lr
    python -m baselines sweep sac --env gymnasium:Pendulum-v1 --search optuna --trials 20 \\
        --range learning_rate=1e-4:1e-2:log --grid n_step=1,3 --seeds 0 1
    python -m baselines report --sweep runs/sweeps/dqn-lr

Each trial is an ordinary ``python -m baselines run`` in its own run directory under ``DIR/runs/`` (its config,
logs and result as any run's; a local run's policy snapshot too), started by a Ray Tune trial that reports the
run's evaluations to Tune as they are logged. A grid sweep has one trial per setting and seed; an Optuna search
one trial per suggested setting, which runs its seeds one after another and is scored by their mean final return. With
``--launcher anakin`` a trial runs all its seeds, and the values of the grid's first numeric field, in one
vmapped call on the device. Every trial's run is checkpointed, so the same command resumes a stopped sweep:
finished runs are kept, unfinished ones restart from their newest checkpoint (every launcher's run saves one when
the sweep stops it: docs/sweeps.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Sequence

from baselines import arguments, registry

SPEC_FILE = "sweep.json"  # what the sweep is: written when it starts, compared when it resumes
RUNS = "runs"  # DIR/runs/<label>: the trials' run directories
TUNE = "tune"  # DIR/tune: Ray Tune's experiment state
TRIAL_FILE = "sweep_trial.json"  # in each run directory: the setting and seeds it runs, and its command
PID_FILE = "trial.pid"  # in a run directory while its run process runs: its id and start time
_OWN_FLAGS = ("--seed", "--run-dir", "--checkpoint-dir", "--no-progress", "--num-seeds", "--sweep", "--logger-group")


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A sweep, as its command gave it.

    Attributes:
      agent, environment: what every trial runs.
      grid: ``(field, values)`` pairs, values as the command line wrote them; a grid sweep runs their product,
        an Optuna search chooses among them.
      ranges: ``(field, low, high, log)``: numeric ranges an Optuna search samples from.
      seeds: the seeds of every setting.
      search: ``grid`` or ``optuna``.
      trials: the settings an Optuna search tries.
      run_args: the other ``run`` flags, given to every trial (``--max-steps``, ``--eval-every``, ``--set``, ...).
      asha: stop poor trials early (Tune's ASHA scheduler on the evaluation return).
    """

    agent: str
    environment: str
    grid: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ranges: tuple[tuple[str, float, float, bool], ...] = ()
    seeds: tuple[int, ...] = (0,)
    search: str = "grid"
    trials: int | None = None
    run_args: tuple[str, ...] = ()
    asha: bool = False

    def __post_init__(self):
        if self.search not in ("grid", "optuna"):
            raise ValueError(f"--search takes grid or optuna, got {self.search!r}.")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"--seeds must name at least one seed, each once; got {list(self.seeds)}.")
        if self.search == "grid":
            if not self.grid:
                raise ValueError("A grid sweep needs at least one --grid FIELD=v1,v2,...; the grid is empty.")
            if self.ranges:
                raise ValueError("--range is sampled by a search: add --search optuna --trials N, or give --grid.")
            if self.trials is not None:
                raise ValueError("--trials counts an Optuna search's settings: add --search optuna.")
        else:
            if self.trials is None or self.trials < 1:
                raise ValueError(f"--search optuna needs --trials N (N >= 1), got {self.trials!r}.")
            if not self.grid and not self.ranges:
                raise ValueError("--search optuna needs a space to search: --range FIELD=LOW:HIGH[:log] or --grid.")
        fields = [field for field, *_ in self.grid] + [field for field, *_ in self.ranges]
        repeated = sorted({f for f in fields if fields.count(f) > 1})
        if repeated:
            raise ValueError(f"Each field is swept once; {', '.join(repeated)} appears more than once.")
        for field, values in self.grid:
            if not values:
                raise ValueError(f"--grid {field}= gives no values; give FIELD=v1,v2,...")
        for field, low, high, log in self.ranges:
            if not (math.isfinite(low) and math.isfinite(high) and low < high) or (log and low <= 0):
                raise ValueError(
                    f"--range {field}: LOW < HIGH, both finite (and > 0 with :log) are accepted; got {low}:{high}."
                )

    @property
    def fields(self) -> list[str]:
        return [field for field, _ in self.grid] + [field for field, *_ in self.ranges]

    @property
    def anakin(self) -> bool:
        return _flag_value(self.run_args, "--launcher") == "anakin"

    def as_dict(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_dict(cls, data: dict) -> "Sweep":
        return cls(
            agent=data["agent"],
            environment=data["environment"],
            grid=tuple((f, tuple(v)) for f, v in data["grid"]),
            ranges=tuple((f, lo, hi, log) for f, lo, hi, log in data["ranges"]),
            seeds=tuple(data["seeds"]),
            search=data["search"],
            trials=data["trials"],
            run_args=tuple(data["run_args"]),
            asha=data["asha"],
        )


def _flag_value(args: Sequence[str], flag: str) -> str | None:
    """The last value ``flag`` is given in ``args`` (``--flag V`` or ``--flag=V``), or None."""
    values = _flag_values(args, flag)
    return values[-1] if values else None


def parse_grid(text: str) -> tuple[str, tuple[str, ...]]:
    """``FIELD=v1,v2,...`` (``;`` between values where a value holds commas, e.g. ``hidden_sizes=64,64;256,256``)."""
    field, equals, values = text.partition("=")
    if not equals or not field.strip():
        raise argparse.ArgumentTypeError(f"takes FIELD=v1,v2,..., e.g. learning_rate=1e-4,1e-3; got {text!r}.")
    separator = ";" if ";" in values else ","
    return field.strip(), tuple(v.strip() for v in values.split(separator) if v.strip())


def parse_range(text: str) -> tuple[str, float, float, bool]:
    """``FIELD=LOW:HIGH`` or ``FIELD=LOW:HIGH:log``."""
    field, equals, bounds = text.partition("=")
    parts = bounds.split(":")
    try:
        if not equals or not field.strip() or len(parts) not in (2, 3) or parts[2:] not in ([], ["log"]):
            raise ValueError
        return field.strip(), float(parts[0]), float(parts[1]), parts[2:] == ["log"]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"takes FIELD=LOW:HIGH or FIELD=LOW:HIGH:log, e.g. learning_rate=1e-4:1e-2:log; got {text!r}."
        ) from None


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m baselines sweep",
        allow_abbrev=False,  # --seed (a run flag the sweep sets) must not read as --seeds
        description="Runs a grid or an Optuna search over an agent's config fields, over seeds, as Ray Tune trials "
        "(each an ordinary `run`); resumable with the same command. Any other `run` flag (--max-steps, "
        "--eval-every, --set, --launcher, ...) is given to every trial.",
    )
    parser.add_argument("agent", choices=registry.agent_names(), help="the agent every trial trains")
    parser.add_argument("--env", default="gymnasium:CartPole-v1", help="environment id, '<prefix>:<name>'")
    parser.add_argument(
        "--grid",
        type=parse_grid,
        action="append",
        default=[],
        metavar="FIELD=v1,v2",
        help="a config field and its values (repeatable: a grid sweep runs every combination)",
    )
    parser.add_argument(
        "--range",
        type=parse_range,
        action="append",
        default=[],
        dest="ranges",
        metavar="FIELD=LOW:HIGH[:log]",
        help="with --search optuna: a numeric field sampled between LOW and HIGH (on a log scale with :log)",
    )
    parser.add_argument("--seeds", type=arguments.seed, nargs="+", default=[0], help="the seeds of every setting")
    parser.add_argument("--search", choices=("grid", "optuna"), default="grid", help="grid, or Optuna's sampler")
    parser.add_argument("--trials", type=arguments.batch_count, default=None, help="settings Optuna tries")
    parser.add_argument(
        "--max-concurrent", type=arguments.batch_count, default=None, help="trials at once (default: as fit)"
    )
    parser.add_argument(
        "--cpus-per-trial",
        type=arguments.batch_count,
        default=1,
        help="cores Ray reserves for each trial (its run's threads are held to them)",
    )
    parser.add_argument(
        "--gpus-per-trial", type=arguments.number(0, strict=False), default=0, help="GPUs for each trial (e.g. 0.5)"
    )
    parser.add_argument("--asha", action="store_true", help="stop poor trials early (ASHA on the evaluation return)")
    parser.add_argument(
        "--asha-grace",
        type=arguments.step_budget,
        default=None,
        metavar="STEPS",
        help="with --asha: steps every trial runs before it can be stopped (default: a tenth of --max-steps)",
    )
    parser.add_argument("--ray-address", default=None, help="run the trials on this Ray cluster (default: local)")
    parser.add_argument("--run-dir", default=None, help="the sweep's folder (default: runs/sweeps/<agent>-<time>)")
    return parser


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, Sweep]:
    """The sweep's flags and its ``Sweep``, every value checked before anything starts (ValueError or argparse's
    exit 2 otherwise): fields, values and combinations against the agent's config, the run flags against ``run``."""
    parser = make_parser()
    args, run_args = parser.parse_known_args(argv)
    sweep = Sweep(
        agent=args.agent,
        environment=args.env,
        grid=tuple(args.grid),
        ranges=tuple(args.ranges),
        seeds=tuple(args.seeds),
        search=args.search,
        trials=args.trials,
        run_args=tuple(run_args),
        asha=args.asha,
    )
    check(sweep)
    if args.asha and _flag_value(run_args, "--eval-every") == "0":
        raise ValueError("--asha stops trials on their evaluations, and --eval-every 0 turns them off.")
    if args.asha and sweep.anakin:
        raise ValueError(
            "--asha stops trials one by one, and an anakin trial runs all its seeds and values in one vmapped call; "
            "leave --asha out."
        )
    if args.asha_grace is not None and not args.asha:
        raise ValueError("--asha-grace is for --asha: add --asha or leave --asha-grace out.")
    return args, sweep


def check(sweep: Sweep) -> None:
    """Refuses an unknown field, a value its field does not take, a combination the agent's config refuses, and a
    ``run`` flag the trials' runs would refuse (or that the sweep sets itself)."""
    from baselines import hyperparameters
    from baselines.parser import make_parser as run_parser

    for flag in _OWN_FLAGS:
        if any(arg == flag or arg.startswith(flag + "=") for arg in sweep.run_args):
            raise ValueError(f"{flag} is set by the sweep for each trial; leave it out (seeds: --seeds).")
    config_class = registry.get_agent(sweep.agent).make_config
    fields = hyperparameters.config_fields(config_class)
    for field in sweep.fields:
        if field not in fields:
            close = [f for f in fields if field.lower() in f.lower()][:3]
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"{sweep.agent}'s config has no field {field!r}.{hint} Its fields: {', '.join(fields)}.")
    for field, *_ in sweep.ranges:
        if fields[field] not in (int, float):
            raise ValueError(f"--range samples numbers, and {field} is of type {fields[field]}: give it as --grid.")
    set_fields = [a.split("=", 1)[0] for a in _flag_values(sweep.run_args, "--set")]
    clash = sorted(set(set_fields) & set(sweep.fields))
    if clash:
        raise ValueError(f"{', '.join(clash)} is swept and also given by --set: give it one way.")
    fixed = hyperparameters.parse_assignments(config_class, _flag_values(sweep.run_args, "--set"))
    parsed = {field: [_value(config_class, field, text) for text in values] for field, values in sweep.grid}
    for combination in itertools.product(*parsed.values()):
        overrides = {**fixed, **dict(zip(parsed, combination))}
        for field, low, high, _ in sweep.ranges:
            overrides[field] = fields[field](low)
        try:
            registry.make_agent_config(sweep.agent, sweep.environment, overrides)
        except (ValueError, TypeError) as error:
            raise ValueError(f"The setting {overrides} is refused by {sweep.agent}'s config: {error}") from None
    if sweep.anakin:
        _anakin_plan(sweep, parsed)
    probe = ["run", sweep.agent, "--env", sweep.environment, *sweep.run_args, "--seed", str(sweep.seeds[0])]
    try:
        run_parser().parse_args(probe)
    except SystemExit:
        raise ValueError(f"The trials' `run` flags are refused (above): {' '.join(sweep.run_args)}") from None


def _flag_values(args: Sequence[str], flag: str) -> list[str]:
    values = []
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith(flag + "="):
            values.append(arg.split("=", 1)[1])
    return values


def _value(config_class: type, field: str, text: str) -> Any:
    """``text`` parsed as ``field`` takes it (the message names the grid and the type expected)."""
    from baselines import hyperparameters

    try:
        return hyperparameters.parse_assignments(config_class, [f"{field}={text}"])[field]
    except ValueError as error:
        raise ValueError(f"--grid {field}: {text!r} is refused: {error}") from None


def _anakin_plan(sweep: Sweep, parsed: dict) -> str | None:
    """The grid field an anakin trial vmaps (its first numeric one, or None); refuses what anakin cannot vmap."""
    seeds = list(sweep.seeds)
    if seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(
            f"An anakin trial runs its seeds as one vmapped call of consecutive seeds; got {seeds}: give e.g. "
            f"--seeds {' '.join(str(seeds[0] + i) for i in range(len(seeds)))}."
        )
    if sweep.search != "grid":
        raise ValueError("--launcher anakin sweeps a grid (its values run in one vmapped call); leave --search out.")
    numeric = [f for f, values in parsed.items() if all(isinstance(v, (int, float)) for v in values)]
    return numeric[0] if numeric else None


# ---------------------------------------------------------------------------------------------------- trials


def label(setting: dict[str, str]) -> str:
    """A setting's name, also its runs' folder name: ``learning_rate=0.001,n_step=3``."""
    from baselines.results import safe_name

    return safe_name(",".join(f"{field}={value}" for field, value in setting.items())) or "default"


def grid_settings(sweep: Sweep) -> list[dict[str, str]]:
    """Every combination of the grid's values, in order (for anakin, without the vmapped field)."""
    grid = dict(sweep.grid)
    vmapped = _vmapped_field(sweep)
    if vmapped is not None:
        grid.pop(vmapped)
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def _vmapped_field(sweep: Sweep) -> str | None:
    if not sweep.anakin:
        return None
    config_class = registry.get_agent(sweep.agent).make_config
    return _anakin_plan(sweep, {f: [_value(config_class, f, t) for t in values] for f, values in sweep.grid})


def trial_runs(sweep: Sweep, setting: dict[str, str], seeds: Sequence[int], sweep_dir: str) -> list[tuple[str, list]]:
    """``(run directory, run argv)`` of each run a trial makes: one per seed, or one anakin call for them all."""
    sets = [item for field, value in setting.items() for item in ("--set", f"{field}={value}")]
    common = ["run", sweep.agent, "--env", sweep.environment, *sweep.run_args, *sets, "--no-progress"]
    if _flag_value(sweep.run_args, "--logger") not in (None, "csv"):  # the trials show as one group in the tracker
        common += ["--logger-group", os.path.basename(os.path.normpath(os.path.abspath(sweep_dir)))]
    name = label(setting)
    runs = []
    if sweep.anakin:
        vmapped = _vmapped_field(sweep)
        extra = ["--num-seeds", str(len(seeds))]
        if vmapped is not None:
            extra += ["--sweep", f"{vmapped}={','.join(dict(sweep.grid)[vmapped])}"]
        groups = [(f"{name}-anakin-seeds{seeds[0]}-{seeds[-1]}", seeds[0], extra)]
    else:
        groups = [(f"{name}-seed{seed}", seed, []) for seed in seeds]
    for folder, seed, extra in groups:
        run_dir = os.path.join(os.path.abspath(sweep_dir), RUNS, folder)
        checkpoints = os.path.join(run_dir, "checkpoints")
        argv = [*common, *extra, "--seed", str(seed), "--run-dir", run_dir, "--checkpoint-dir", checkpoints]
        runs.append((run_dir, argv))
    return runs


def run_process(
    command: Sequence[str], run_dir: str, environment: dict[str, str], cwd: str, poll: Callable[[], None]
) -> int:
    """Runs a trial's run ``command``, its output appended to ``run_dir/output.log``, and returns its exit status.

    While it runs, ``run_dir/trial.pid`` names it (its process id and start time, which the sweep checks before it
    signals or waits for the id, as ids are reused); the file is removed when it ends. ``poll`` is called about
    once a second. The run gets SIGTERM (and saves a checkpoint) if the calling thread ends first.
    """
    pid_file = os.path.join(run_dir, PID_FILE)
    with open(os.path.join(run_dir, "output.log"), "a") as log:
        process = subprocess.Popen(
            list(command),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            cwd=cwd,
            preexec_fn=_die_with_parent,
            start_new_session=True,  # one SIGTERM when the trial ends, not Ray's kill of its process group
        )
    try:
        _write_pid_file(pid_file, process.pid)
        while True:
            try:
                return process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                poll()
    finally:
        if process.poll() is not None:  # one still running (``poll`` raised) keeps its file: the sweep waits for it
            _remove(pid_file)


def _write_pid_file(path: str, pid: int) -> None:
    """Names process ``pid`` in ``path``: its id and its start time (clock ticks after boot, /proc/PID/stat)."""
    stat = _process_stat(pid)
    if stat is None:
        return  # it has already ended and been reaped: nothing to wait for
    with open(path + ".tmp", "w") as f:
        json.dump({"pid": pid, "started": stat[1]}, f)
    os.replace(path + ".tmp", path)


def _process_stat(pid: int) -> tuple[str, int] | None:
    """Process ``pid``'s state letter and start time (clock ticks after boot), or None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()  # after the command name, which may hold spaces
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _recorded_run(path: str) -> int | None:
    """The id of the run process the pid file ``path`` names, if that process still runs; None if it has ended,
    if the id now names another process, or if the file cannot be read (as an older sweep's bare id)."""
    try:
        with open(path) as f:
            recorded = json.load(f)
        pid, started = int(recorded["pid"]), int(recorded["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    stat = _process_stat(pid)
    if stat is None or stat[1] != started or stat[0] in ("Z", "X"):
        return None
    return pid


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _die_with_parent() -> None:
    """In a trial's run process: SIGTERM when the trial's process ends (a run with checkpoints then saves)."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _reported_rows(run_dir: str) -> list[tuple[int, float]]:
    from baselines.results import evaluator_rows

    rows = []
    for row in evaluator_rows(run_dir):
        try:
            rows.append((int(float(row["actor_steps"])), float(row["evaluation_return"])))
        except (KeyError, ValueError):
            continue  # a row being written
    return rows


def final_returns(run_dir: str) -> list[float]:
    """The final evaluation return of each agent of a finished run (one, or one per anakin agent)."""
    with open(os.path.join(run_dir, "result.json")) as f:
        result = json.load(f)
    agents = result.get("agents") or [result]
    return [a["evaluations"][-1]["mean_return"] for a in agents if a["evaluations"]]


def run_trial(config: dict) -> None:
    """A Tune trial: its runs one after another as ``python -m baselines run`` processes, each run's evaluations
    reported to Tune as they are logged (``progress``: the trial's actor steps so far; ``evaluation_return``;
    ``objective``: the mean final return of its finished runs). A run already finished is not run again."""
    from ray import tune

    sweep = Sweep.from_dict(config["sweep"])
    setting = {field: _text(config[field]) for field in sweep.fields if field in config}  # anakin vmaps one
    seeds = [config["seed"]] if "seed" in config else list(sweep.seeds)
    finals: list[float] = []
    offset = 0
    max_steps = int(config["max_steps"])
    for run_dir, argv in trial_runs(sweep, setting, seeds, config["sweep_dir"]):
        os.makedirs(run_dir, exist_ok=True)
        with open(os.path.join(run_dir, TRIAL_FILE), "w") as f:  # what the report groups the run under
            json.dump(
                {
                    "setting": setting,
                    "seeds": seeds if sweep.anakin else [int(_flag_value(argv, "--seed"))],
                    "command": ["python", "-m", "baselines", *argv],
                },
                f,
                indent=2,
            )
        reported = 0

        def report_new_rows() -> None:
            nonlocal reported
            rows = _reported_rows(run_dir)
            for steps, value in rows[reported:]:
                objective = finals if finals else [value]
                tune.report({"progress": offset + steps, "evaluation_return": value, "objective": _mean(objective)})
            reported = len(rows)

        if not os.path.exists(os.path.join(run_dir, "result.json")):
            if os.path.exists(os.path.join(config["sweep_dir"], STOPPING)):
                raise RuntimeError("The sweep is stopping; this run starts when it resumes.")
            environment = {**os.environ, **_thread_environment(config["cpus"])}
            command = [sys.executable, "-m", "baselines", *argv]
            status = run_process(command, run_dir, environment, config["cwd"], report_new_rows)
            if status != 0:
                with open(os.path.join(run_dir, "output.log")) as f:
                    tail = "".join(f.readlines()[-15:])
                raise RuntimeError(
                    f"{tail}\nThe run in {run_dir} failed (exit status {status}); its log: "
                    f"{os.path.join(run_dir, 'output.log')}"
                )
        finals.extend(final_returns(run_dir))
        report_new_rows()
        if not reported:
            tune.report({"progress": offset + max_steps, "evaluation_return": finals[-1], "objective": _mean(finals)})
        offset += max_steps
    tune.report({"progress": offset, "evaluation_return": finals[-1], "objective": _mean(finals)})


def _text(value: Any) -> str:
    """A setting's value as its runs' ``--set`` gets it: a sampled float to 4 significant digits."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values))


def _thread_environment(cpus: int) -> dict[str, str]:
    from launch.config import thread_environment

    return thread_environment(int(cpus))


# ---------------------------------------------------------------------------------------------------- running


def _max_steps(sweep: Sweep) -> int:
    given = _flag_value(sweep.run_args, "--max-steps")
    if given is not None:
        return int(given)
    baseline = registry.BASELINES.get((sweep.agent, sweep.environment))
    return baseline.max_steps if baseline is not None else registry.DEFAULT_MAX_STEPS


def _param_space(sweep: Sweep, args: argparse.Namespace, sweep_dir: str) -> dict:
    from ray import tune

    space: dict[str, Any] = {
        "sweep": sweep.as_dict(),
        "sweep_dir": os.path.abspath(sweep_dir),
        "cwd": os.getcwd(),
        "cpus": args.cpus_per_trial,
        "max_steps": _max_steps(sweep),
    }
    if sweep.search == "grid":
        settings = grid_settings(sweep)
        for field in settings[0] if settings else {}:
            space[field] = tune.grid_search(
                sorted({s[field] for s in settings}, key=list(dict(sweep.grid)[field]).index)
            )
        if not sweep.anakin:
            space["seed"] = tune.grid_search(list(sweep.seeds))
        return space
    for field, values in sweep.grid:
        space[field] = tune.choice(list(values))
    for field, low, high, log in sweep.ranges:
        kind = registry.get_agent(sweep.agent).make_config.__dataclass_fields__[field].type
        if kind in (int, "int"):
            space[field] = (tune.lograndint if log else tune.randint)(int(low), int(high) + 1)
        else:
            space[field] = (tune.loguniform if log else tune.uniform)(low, high)
    return space


def _trial_dirname(trial: Any) -> str:
    config = trial.config
    sweep = Sweep.from_dict(config["sweep"])
    name = label({field: _text(config[field]) for field in sweep.fields if field in config})
    return f"{name}-seed{config['seed']}" if "seed" in config else f"{name}-{trial.trial_id}"


def _write_spec(sweep_dir: str, sweep: Sweep, argv: Sequence[str]) -> dict:
    """Writes ``sweep.json`` for a new sweep, or refuses a folder that holds another sweep; returns its state."""
    path = os.path.join(sweep_dir, SPEC_FILE)
    if os.path.exists(path):
        with open(path) as f:
            state = json.load(f)
        if state["sweep"] != sweep.as_dict():
            raise ValueError(
                f"{sweep_dir} holds another sweep ({' '.join(state['command'])}); the same command resumes it, "
                "and a new sweep needs a new --run-dir."
            )
        return state
    if os.path.isdir(sweep_dir) and os.listdir(sweep_dir):
        raise ValueError(f"--run-dir {sweep_dir} holds other files; give a new or empty folder.")
    os.makedirs(sweep_dir, exist_ok=True)
    state = {"sweep": sweep.as_dict(), "command": ["python", "-m", "baselines", "sweep", *argv], "sessions": []}
    _save_state(sweep_dir, state)
    return state


def _save_state(sweep_dir: str, state: dict) -> None:
    path = os.path.join(sweep_dir, SPEC_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump(state, f, indent=2)
    os.replace(path + ".tmp", path)


STOPPING = "stopping"  # DIR/stopping: the sweep is being stopped; no trial starts a run while it exists


def _live_runs(sweep_dir: str) -> list[int]:
    """The process ids of the trials' runs still running; the pid file of one that has ended (or whose id now
    names another process) is removed."""
    runs = os.path.join(sweep_dir, RUNS)
    pids = []
    for folder in os.listdir(runs) if os.path.isdir(runs) else []:
        path = os.path.join(runs, folder, PID_FILE)
        if not os.path.exists(path):
            continue
        pid = _recorded_run(path)
        if pid is None:
            _remove(path)
        else:
            pids.append(pid)
    return pids


def _wait_for_runs(sweep_dir: str, timeout: float = 120.0) -> None:
    """Waits (at most ``timeout`` seconds) until no trial's run process is alive."""
    deadline = time.monotonic() + timeout
    while _live_runs(sweep_dir) and time.monotonic() < deadline:
        time.sleep(0.2)


class _GracefulStop:
    """Ctrl-C or SIGTERM to the sweep: each running trial's run gets SIGTERM and saves a checkpoint, then Tune is
    told to stop (SIGUSR1, its own graceful stop) and saves its experiment state. A second signal stops at once."""

    def __init__(self, sweep_dir: str):
        self.sweep_dir = sweep_dir
        self.requested = False

    def __enter__(self) -> "_GracefulStop":
        self._previous = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        marker = os.path.join(self.sweep_dir, STOPPING)
        if os.path.exists(marker):
            os.remove(marker)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt("stopped at once by a second signal")
        self.requested = True
        print(
            "Stopping the sweep: each running trial saves a checkpoint first (a second Ctrl-C stops now).", flush=True
        )
        open(os.path.join(self.sweep_dir, STOPPING), "w").close()
        threading.Thread(target=self._stop_runs_then_tune, daemon=True).start()

    def _stop_runs_then_tune(self) -> None:
        stop_runs(self.sweep_dir)
        os.kill(os.getpid(), signal.SIGUSR1)


def stop_runs(sweep_dir: str, timeout: float = 120.0) -> None:
    """SIGTERM to each trial's run still running (it saves a checkpoint and exits), then waits (at most ``timeout``
    seconds) until they have ended. Only processes their pid files name, with the start time recorded, are
    signalled."""
    for pid in _live_runs(sweep_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # it has just ended
    _wait_for_runs(sweep_dir, timeout)


def run_sweep(argv: Sequence[str]) -> int:
    """Parses, checks and runs (or resumes) a sweep; prints where its runs are and how to report on it."""
    args, sweep = parse(argv)
    sweep_dir = args.run_dir or os.path.join("runs", "sweeps", f"{sweep.agent}-{time.strftime('%Y%m%d-%H%M%S')}")
    if args.ray_address is not None:
        from launch.ray_launcher import check_ray_cluster

        check_ray_cluster(args.ray_address)
    state = _write_spec(sweep_dir, sweep, argv)
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # no TensorBoard files: runs write their own
    from ray import tune

    from launch.ray_launcher import RaySession

    tune_dir = os.path.join(os.path.abspath(sweep_dir), TUNE)
    resources = {"cpu": args.cpus_per_trial, "gpu": args.gpus_per_trial}
    trainable = tune.with_resources(run_trial, resources)
    started = time.time()
    os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"  # _GracefulStop stops the runs first, then Tune
    session = RaySession(args.ray_address)
    stop = _GracefulStop(sweep_dir)
    try:
        if tune.Tuner.can_restore(os.path.join(tune_dir, "sweep")):
            print(f"Resuming the sweep in {sweep_dir}: finished runs are kept, unfinished ones resume.", flush=True)
            tuner = tune.Tuner.restore(
                os.path.join(tune_dir, "sweep"), trainable, resume_unfinished=True, resume_errored=True
            )
        else:
            tuner = _new_tuner(sweep, args, sweep_dir, trainable, tune_dir)
            count = len(grid_settings(sweep)) * (1 if sweep.anakin else len(sweep.seeds))
            what = f"{count} trials" if sweep.search == "grid" else f"{sweep.trials} Optuna trials"
            print(f"Sweeping {sweep.agent} on {sweep.environment}: {what}; runs in {sweep_dir}/{RUNS}", flush=True)
        with stop:
            grid = tuner.fit()
    finally:
        _wait_for_runs(sweep_dir)  # a trial Tune stopped (ASHA) ends its run with SIGTERM: let it save and exit
        session.close()
        state["sessions"].append({"started": started, "wall_seconds": round(time.time() - started, 1)})
        _save_state(sweep_dir, state)
    done = _finished_runs(sweep_dir)
    if stop.requested:
        print(
            f"The sweep stopped with {len(done)} runs finished; the same command resumes it.",
            file=sys.stderr,
            flush=True,
        )
        return 1
    if grid.num_errors:
        print(
            f"{grid.num_errors} trial(s) failed; the same command runs them again (each from its checkpoint):",
            file=sys.stderr,
        )
        for error in grid.errors:
            print(f"  {str(error).strip().splitlines()[-1]}", file=sys.stderr)
        return 1
    early = f" ({_expected_runs(sweep) - len(done)} stopped early by ASHA)" if len(done) < _expected_runs(sweep) else ""
    print(
        f"Sweep finished: {len(done)} runs{early} in {sweep_dir}/{RUNS}. Report: python -m baselines report "
        f"--sweep {sweep_dir}",
        flush=True,
    )
    return 0


def _expected_runs(sweep: Sweep) -> int:
    if sweep.search == "optuna":
        return sweep.trials * len(sweep.seeds)
    return len(grid_settings(sweep)) * (1 if sweep.anakin else len(sweep.seeds))


def _finished_runs(sweep_dir: str) -> list[str]:
    runs = os.path.join(sweep_dir, RUNS)
    folders = sorted(os.listdir(runs)) if os.path.isdir(runs) else []
    return [os.path.join(runs, f) for f in folders if os.path.exists(os.path.join(runs, f, "result.json"))]


def _new_tuner(sweep: Sweep, args: argparse.Namespace, sweep_dir: str, trainable: Any, tune_dir: str) -> Any:
    from ray import tune
    from ray.tune.logger import CSVLoggerCallback, JsonLoggerCallback

    search_alg = scheduler = None
    if sweep.search == "optuna":
        from ray.tune.search.optuna import OptunaSearch

        search_alg = OptunaSearch(metric="objective", mode="max", seed=sweep.seeds[0])
    if sweep.asha:
        from ray.tune.schedulers import ASHAScheduler

        max_t = _max_steps(sweep) * (len(sweep.seeds) if sweep.search == "optuna" else 1)
        scheduler = ASHAScheduler(
            time_attr="progress",
            metric="evaluation_return",
            mode="max",
            max_t=max_t,
            grace_period=args.asha_grace or max(1, _max_steps(sweep) // 10),
        )
    return tune.Tuner(
        trainable,
        param_space=_param_space(sweep, args, sweep_dir),
        tune_config=tune.TuneConfig(
            num_samples=sweep.trials if sweep.search == "optuna" else 1,
            max_concurrent_trials=args.max_concurrent,
            search_alg=search_alg,
            scheduler=scheduler,
            trial_dirname_creator=_trial_dirname,
        ),
        run_config=tune.RunConfig(
            name="sweep", storage_path=tune_dir, verbose=1, callbacks=[JsonLoggerCallback(), CSVLoggerCallback()]
        ),
    )


def main(argv: Sequence[str]) -> int:
    """``python -m baselines sweep ...``: exit status 2 with the reason for a sweep refused before it starts."""
    from launch import ClusterConnectionError

    try:
        return run_sweep(argv)
    except (ValueError, TypeError, ClusterConnectionError) as error:
        print(f"python -m baselines sweep: error: {error}", file=sys.stderr, flush=True)
        return 2
