"""The working tree against an earlier git revision, as a user runs an agent (DQN on CartPole unless ``--agent``
and ``--env`` say otherwise): the same command, seed and interpreter.

The host's speed drifts by more than the changes worth measuring (the same code has measured 1.6x apart on
different days, and a few per cent within an hour), so a figure "before" taken at one time and "after" at
another cannot show a change of a few per cent. Here both run in one window: the revision is checked out in a
temporary git worktree, and each round runs ``python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0
--max-steps N --eval-every 0`` once on each side, alternating which goes first, pinned to one core with
single-threaded XLA and BLAS (``stacks.run_once``). Reported: each side's runs and median, and the median of the
rounds' after/before ratios with its spread.

    python benchmarks/revisions.py REV [--steps 30000] [--rounds 6] [--agent sac --env gymnasium:Pendulum-v1]
    python benchmarks/revisions.py REV --agent ppo --env jax:CartPole-v1 --flags="--launcher anakin" --steps 1000000
writes benchmarks/results/revisions.json (revisions-<agent>[-<launcher>].json for another agent or launcher). A
run that compiles first (the device loop) is compared on its steps/s after compiling (its chunks).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from baselines import arguments  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402
from benchmarks.stacks import run_once  # noqa: E402


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revision", help="the git revision to compare the working tree against (e.g. HEAD~3)")
    parser.add_argument("--steps", type=arguments.positive_integer, default=30_000)
    parser.add_argument("--rounds", type=arguments.positive_integer, default=6)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--agent", default="dqn", help="the agent both sides run")
    parser.add_argument("--env", default="gymnasium:CartPole-v1", help="the environment both sides run")
    parser.add_argument("--flags", default="", help="more run flags both sides get, e.g. '--launcher anakin'")
    parser.add_argument("--output", default=None, help="default: benchmarks/results/revisions[-<agent>].json")
    args = parser.parse_args()
    flags = args.flags.split()
    name = "revisions" + ("" if args.agent == "dqn" else f"-{args.agent}")
    name += f"-{flags[flags.index('--launcher') + 1]}.json" if "--launcher" in flags else ".json"
    args.output = args.output or os.path.join(ROOT, "benchmarks", "results", name)
    python = os.path.join(ROOT, ".venv", "bin", "python")
    if not os.path.exists(python):
        parser.exit(2, "error: .venv missing: make install builds it.\n")
    try:
        commit = _git("rev-parse", "--verify", f"{args.revision}^{{commit}}")
    except subprocess.CalledProcessError:
        parser.exit(2, f"error: {args.revision!r} is not a git revision of {os.path.abspath(ROOT)}.\n")
    head, dirty = _git("rev-parse", "HEAD"), bool(_git("status", "--porcelain", "--untracked-files=no"))
    before_root = tempfile.mkdtemp(prefix="bench-revision-")
    _git("worktree", "add", "--detach", before_root, commit)
    try:
        runs: dict[str, list] = {"before": [], "after": []}
        for round_index in range(args.rounds):
            order = [("before", before_root), ("after", ROOT)]
            for side, root in order if round_index % 2 == 0 else order[::-1]:
                runs[side].append(
                    run_once(
                        python,
                        args.steps,
                        args.core,
                        root=os.path.abspath(root),
                        agent=args.agent,
                        env=args.env,
                        flags=flags,
                    )
                )
                print(round_index, side, runs[side][-1], flush=True)
    finally:
        _git("worktree", "remove", "--force", before_root)
    key = "training_steps_per_second" if "training_steps_per_second" in runs["after"][0] else "steps_per_second"
    ratios = [a[key] / b[key] for a, b in zip(runs["after"], runs["before"])]
    report = {
        "benchmark": "revisions",
        "command": f"python -m baselines run {args.agent} --env {args.env} --seed 0 {args.flags} --max-steps "
        f"{args.steps} --eval-every 0".replace("  ", " "),
        "compared": key,
        "before": {"revision": args.revision, "commit": commit},
        "after": {"commit": head, "uncommitted_changes": dirty},
        "machine": machine(pinned_core=args.core, threads=SINGLE_THREAD_ENV),
        "runs": runs,
        "median_steps_per_second": {side: round(statistics.median(r[key] for r in rs), 1) for side, rs in runs.items()},
        "after_over_before": {
            "median": round(statistics.median(ratios), 4),
            "min": round(min(ratios), 4),
            "max": round(max(ratios), 4),
            "rounds": len(ratios),
        },
    }
    write_report(args.output, report, summary={k: report[k] for k in ("median_steps_per_second", "after_over_before")})


if __name__ == "__main__":
    main()
