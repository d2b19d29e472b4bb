"""``python -m baselines report``: tables, the README section between markers, the plots, and user runs."""

import json
import os
import struct

import pytest

from baselines import plotting, registry, report, results
from baselines.cli import main

PENDULUM = "gymnasium:Pendulum-v1"
CARTPOLE = "gymnasium:CartPole-v1"


def _record(agent, environment, seed, returns, every=2_000, seconds_per_step=0.01):
    """A record as ``baselines reproduce`` writes it, with a made-up curve."""
    evaluations = [(every * (i + 1), value, every * (i + 1) * seconds_per_step) for i, value in enumerate(returns)]
    steps = every * len(returns)
    return results.make_record(agent, environment, seed, steps, evaluations, steps, steps, steps * seconds_per_step)


def _write_records(directory):
    # SAC on Pendulum: seed 0 reaches -200 at 4,000 and holds 1 of its 2 later evaluations; seed 1 at 8,000,
    # with no later evaluation. DQN on CartPole: one seed that never reaches 475.
    results.write_record(_record("sac", PENDULUM, 0, [-900.0, -150.0, -250.0, -120.0]), directory)
    results.write_record(_record("sac", PENDULUM, 1, [-1000.0, -800.0, -300.0, -180.0]), directory)
    results.write_record(_record("dqn", CARTPOLE, 0, [20.0, 200.0, 300.0], every=5_000), directory)


def _png_size(path):
    with open(path, "rb") as f:
        header = f.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


def _readme(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(f"# Title\n\nbefore\n\n{report.START_MARKER}\nstale table\n{report.END_MARKER}\n\nafter\n")
    return path


def _line(text, start):
    return next(line for line in text.splitlines() if line.startswith(start))


def test_report_writes_the_table_the_section_between_markers_and_one_plot_per_environment(tmp_path):
    records = tmp_path / "records"
    _write_records(str(records))
    readme = _readme(tmp_path)
    output = tmp_path / "report"

    written = report.report(str(records), str(output), readme=str(readme))

    table = (output / "README.md").read_text()
    sac = _line(table, f"| sac | {PENDULUM} |")
    # budget 20k, target -200, 2/2 seeds, final and best (-120, -180), median of 4,000 and 8,000 steps to
    # target, 1 of 2 later evaluations held, 100 steps/s.
    cells = [cell.strip() for cell in sac.strip("|").split("|")]
    assert cells[2:10] == ["20k", "-200", "2/2", "-150.0 ± 30.0", "-150.0 ± 30.0", "6,000", "1/2 (50%)", "100"]
    assert cells[10].startswith("RL Zoo (SB3 SAC): -157.0 ± 88.7 at 20k ([source](https://github.com/DLR-RM/")
    dqn = _line(table, f"| dqn | {CARTPOLE} |")
    assert "| 0/1 | 300.0 ± 0.0 | 300.0 ± 0.0 | - | - |" in dqn
    for (agent, environment), baseline in registry.BASELINES.items():
        if (agent, environment) not in {("sac", PENDULUM), ("dqn", CARTPOLE)}:
            label = f"{agent} (anakin)" if baseline.launcher == "anakin" else agent  # trained on the device
            assert "| no records |" in _line(table, f"| {label} | {environment} |")
    assert _line(table, f"| sac | {PENDULUM} | 0 |").split("|")[4].strip() == "4,000"  # per-seed table

    text = readme.read_text()
    assert text.startswith("# Title\n\nbefore\n\n" + report.START_MARKER) and text.endswith(
        report.END_MARKER + "\n\nafter\n"
    )
    assert "stale table" not in text and sac in text
    assert "![gymnasium:Pendulum-v1](report/plots/gymnasium_Pendulum-v1.png)" in text

    plots = sorted(p for p in written if p.endswith(".png"))
    assert [os.path.basename(p) for p in plots] == [
        "gymnasium_CartPole-v1.png",
        "gymnasium_Pendulum-v1.png",
        "rliable_classic_control.png",  # the performance profiles of the suite both environments are in
    ]
    for path in plots[:2]:
        assert _png_size(path) == plotting.CURVE_GROUPS_SIZE
    assert _png_size(plots[2]) == plotting.PROFILES_SIZE

    # A second report from the same records writes the same section.
    report.report(str(records), str(output), readme=str(readme))
    assert readme.read_text() == text


def test_records_without_per_evaluation_times_are_placed_at_the_runs_mean_rate_and_say_so(tmp_path):
    record = _record("sac", PENDULUM, 0, [-900.0, -150.0], seconds_per_step=0.02)
    del record["curve_seconds"]
    run = report.SeedRun.from_record(record)
    assert run.seconds_estimated and run.seconds == pytest.approx((40.0, 80.0))
    results.write_record(record, str(tmp_path / "records"))
    report.report(str(tmp_path / "records"), str(tmp_path / "out"), readme=None)
    assert "1 of 1 records predate per-evaluation times (sac on gymnasium:Pendulum-v1)" in (
        (tmp_path / "out" / "README.md").read_text()
    )


def test_a_users_runs_are_drawn_against_a_baseline(tmp_path, capsys):
    records = tmp_path / "records"
    _write_records(str(records))
    runs = tmp_path / "runs"
    for seed, returns in ((0, [-700.0, -190.0]), (1, [-600.0, -400.0])):
        run_dir = runs / f"mine-seed{seed}"
        run_dir.mkdir(parents=True)
        evaluations = [
            {"actor_steps": 2_000 * (i + 1), "mean_return": r, "std_return": 1.0, "wall_seconds": 5.0 * (i + 1)}
            for i, r in enumerate(returns)
        ]
        result = {"agent": "sac", "environment": PENDULUM, "seed": seed, "actor_steps": 4_000}
        result.update(learner_steps=3_000, wall_seconds=10.0, evaluations=evaluations)
        (run_dir / "result.json").write_text(json.dumps(result))
    with open(report.REPOSITORY_README) as f:
        repository_readme = f.read()

    assert main(["report", "--records", str(records), "--runs", str(runs), "--against", f"sac:{PENDULUM}"]) == 0

    table = (runs / "report" / "README.md").read_text()
    assert "| 1/2 | -295.0 ± 105.0 | -295.0 ± 105.0 | 4,000 | - | 400 |" in _line(table, f"| yours: sac | {PENDULUM} |")
    assert _line(table, f"| sac | {PENDULUM} |")  # the baseline beside them
    assert f"| dqn | {CARTPOLE}" not in table  # and no other baseline
    assert _png_size(runs / "report" / "plots" / "gymnasium_Pendulum-v1.png") == plotting.CURVE_GROUPS_SIZE
    with open(report.REPOSITORY_README) as f:
        assert f.read() == repository_readme, "a report of a user's runs must leave the repository README alone"
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--against", f"sac:{PENDULUM}"], "give them with --runs DIR"),
        (["--runs", "{tmp}", "--against", "sac:gymnasium:Nope-v0"], "is not a registered baseline"),
        (["--runs", "{tmp}/missing"], "no such directory"),
        (["--runs", "{tmp}"], "holds no run with evaluations"),
    ],
)
def test_report_refuses_bad_arguments_with_a_clear_message(tmp_path, capsys, arguments, message):
    arguments = [a.replace("{tmp}", str(tmp_path)) for a in arguments]
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--records", str(tmp_path), "--output", str(tmp_path / "out"), *arguments])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_readme_without_the_markers_is_refused(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n")
    with pytest.raises(ValueError, match="exactly one"):
        report.report(str(tmp_path), str(tmp_path / "out"), readme=str(readme))
    assert readme.read_text() == "# no markers\n"


def test_the_repository_readme_shows_what_the_report_makes_of_the_published_records():
    """The README's results section is regenerated, not hand-edited: it equals the report of today's records."""
    rows = report.baseline_rows(report.load_records())
    paths = report.plot_paths(rows, os.path.join(results.RESULTS_DIR, "plots"))
    with open(report.REPOSITORY_README) as f:
        text = f.read()
    section = text[text.index(report.START_MARKER) + len(report.START_MARKER) : text.index(report.END_MARKER)]
    expected = report.readme_section(rows, paths, os.path.dirname(report.REPOSITORY_README))
    assert section.strip() == expected.strip(), "run `python -m baselines report` after changing the records"
    for path in paths.values():
        assert os.path.exists(path), f"{path} is missing: run `python -m baselines report`"


def test_every_record_is_of_a_registered_baseline_at_its_budget_and_target():
    for run_file in os.listdir(results.RUNS_DIR):
        with open(os.path.join(results.RUNS_DIR, run_file)) as f:
            record = json.load(f)
        baseline = registry.BASELINES.get((record["agent"], record["environment"]))
        assert baseline is not None, f"{run_file} is not of a registered baseline"
        assert record["max_steps"] == baseline.max_steps, f"{run_file} ran {record['max_steps']} steps"
        assert record["target_return"] == baseline.target_return, run_file


def test_every_reference_is_of_a_registered_baseline():
    from baselines.references import REFERENCES

    assert set(REFERENCES) <= set(registry.BASELINES)
    for reference in REFERENCES.values():
        # A figure is quoted with its spread, or marked as read off a published curve.
        quoted_or_read = "±" in reference.figure or reference.figure.startswith("≈")
        assert reference.timesteps > 0 and reference.url.startswith("https://") and quoted_or_read


def test_the_rate_names_the_accelerator_the_runs_had():
    def run(seed, machine):
        return report.SeedRun("ppo", CARTPOLE, seed, (100,), (1.0,), (1.0,), 1_000, 10.0, machine=machine)

    row = lambda *runs: report.ResultRow("ppo", "ppo", CARTPOLE, 1.0, 1_000, runs, None)  # noqa: E731
    assert row(run(0, {"cpus": 2}), run(1, None)).rate_cell() == "100"
    assert row(run(0, {"device": "NVIDIA H200"})).rate_cell() == "100 (NVIDIA H200)"
    assert row(run(0, {"device": "NVIDIA H200"}), run(1, {"cpus": 2})).rate_cell() == "100 (CPU, NVIDIA H200)"
