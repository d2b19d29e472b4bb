"""The report's aggregate statistics: suites, per-task normalisation, rliable's IQM, intervals and profiles."""

import os

import numpy as np
import pytest

from baselines import aggregate, normalisation, references, registry, report

CARTPOLE = "gymnasium:CartPole-v1"
PENDULUM = "gymnasium:Pendulum-v1"


def test_the_interquartile_mean_leaves_out_the_lowest_and_highest_quarter_of_the_runs_over_tasks():
    # 8 runs (4 seeds x 2 tasks): the middle half is 2, 3, 4, 5, whatever the outliers (0, 1, 6, 100).
    scores = np.array([[0.0, 4.0], [1.0, 5.0], [2.0, 6.0], [3.0, 100.0]])
    (iqm, mean), _ = aggregate.interval_estimates(scores, reps=200)
    assert iqm == pytest.approx(3.5)
    assert mean == pytest.approx(np.mean([1.5, 28.75]))  # the mean of the tasks' means


def test_the_interval_is_the_bootstraps_percentiles_and_resamples_runs_within_each_task():
    # One task of runs 0 and 1: a resample's mean is 0, 0.5 or 1 (probabilities 1/4, 1/2, 1/4), so the 95%
    # percentile interval is [0, 1].
    _, interval = aggregate.interval_estimates(np.array([[0.0], [1.0]]))
    assert interval[:, 0] == pytest.approx([0.0, 1.0])
    # Task A's runs all 0, task B's all 1: resampling within each task keeps four of each, so every resample's
    # IQM is 0.5 (resampling the 8 runs together would not).
    _, interval = aggregate.interval_estimates(np.array([[0.0, 1.0]] * 4))
    assert interval[:, 0] == pytest.approx([0.5, 0.5])


def test_the_bootstrap_is_the_same_from_the_same_seed_and_leaves_numpys_global_generator_as_it_was():
    scores = np.random.default_rng(1).normal(size=(5, 3))
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    first = aggregate.interval_estimates(scores, reps=500, seed=7)
    assert np.array_equal(np.random.get_state()[1], before)
    again = aggregate.interval_estimates(scores, reps=500, seed=7)
    other = aggregate.interval_estimates(scores, reps=500, seed=8)
    assert np.array_equal(first[1], again[1]) and not np.array_equal(first[1], other[1])
    low, high = first[1][:, 0]
    assert scores.min() <= low <= first[0][0] <= high <= scores.max()


def test_the_performance_profile_is_the_fraction_of_runs_above_each_tau():
    scores = np.array([[0.2, 0.8], [0.5, 1.2]])
    taus = np.array([0.0, 0.5, 1.0, 1.5])
    profile, band = aggregate.performance_profile(scores, taus, reps=200)
    assert profile == pytest.approx([1.0, 0.5, 0.25, 0.0])  # above, not at: 0.5 is not above 0.5
    library, _ = aggregate._rliable()
    assert profile == pytest.approx(library.score_distributions(scores, taus))  # rliable's own definition
    assert band.shape == (2, 4) and np.all(band[0] <= profile) and np.all(profile <= band[1])


def test_importing_rliable_leaves_pandas_as_it_was():
    from pandas.util import _decorators

    original = _decorators.deprecate_kwarg
    library, metrics = aggregate._rliable()
    assert _decorators.deprecate_kwarg is original
    assert metrics.aggregate_iqm(np.arange(8.0)) == pytest.approx(3.5)


@pytest.mark.parametrize(
    "environment, suite",
    [
        (CARTPOLE, "classic control"),
        ("jax:Pendulum-v1", "classic control"),
        ("gymnasium:Acrobot-v1", "classic control"),
        ("jax:MinAtar-Breakout", "MinAtar"),
        ("jax:MinAtar-SpaceInvaders", "MinAtar"),
        ("dm_control:cartpole/swingup", "dm_control"),
        ("bsuite:catch/0", "bsuite"),
        ("jax:catch", "bsuite"),
        ("atari:Breakout?terminal_on_life_loss=true", "Atari"),
        ("memory:CartPole-v1", "memory"),
    ],
)
def test_each_environment_family_has_its_suite(environment, suite):
    assert aggregate.suite_of(environment) == suite


def test_an_environment_of_no_suite_is_refused_saying_which_suites_there_are():
    with pytest.raises(ValueError, match=r"gymnasium:HalfCheetah-v5 is in no suite: suites are classic control"):
        aggregate.suite_of("gymnasium:HalfCheetah-v5")


def test_every_registered_baseline_has_a_suite_and_a_normaliser_with_one_of_its_targets():
    for (agent, environment), baseline in registry.BASELINES.items():
        assert aggregate.suite_of(environment) in aggregate.SUITES
        scale = normalisation.scale_of(environment)
        targets = {b.target_return for (_, e), b in registry.BASELINES.items() if e == environment}
        assert scale.target_return in targets, f"{environment}: target {scale.target_return}, registered {targets}"
        assert scale.random_return < scale.target_return, environment


def test_scores_are_0_at_the_random_policys_return_and_1_at_the_target():
    scale = normalisation.scale_of(PENDULUM)
    assert normalisation.normalise(PENDULUM, [scale.random_return, -200.0, -617.5]) == pytest.approx(
        [0.0, 1.0, (-617.5 - scale.random_return) / (-200.0 - scale.random_return)]
    )


def test_a_task_without_a_normaliser_is_refused_saying_how_to_add_one():
    with pytest.raises(normalisation.NoScaleError) as error:
        normalisation.normalise("gymnasium:Acrobot-v1", [-100.0])
    assert "No normalised score for gymnasium:Acrobot-v1" in str(error.value)
    assert "`python -m baselines.normalisation gymnasium:Acrobot-v1`" in str(error.value)


def test_the_random_figure_is_what_measuring_it_again_gives():
    mean, stderr = normalisation.measure_random_return(CARTPOLE)
    scale = normalisation.scale_of(CARTPOLE)
    assert (round(mean, 2), round(stderr, 2)) == (scale.random_return, scale.random_stderr)


def test_a_suites_agents_are_aggregated_over_tasks_and_a_task_without_a_normaliser_is_left_out_and_named(tmp_path):
    entries = [
        aggregate.TaskRuns("ppo", CARTPOLE, (475.0, 475.0, 475.0)),
        aggregate.TaskRuns("ppo", PENDULUM, (-200.0, -200.0)),  # one seed fewer: the first 2 of CartPole's count
        aggregate.TaskRuns("ppo", "gymnasium:Acrobot-v1", (-80.0,)),  # no normaliser
        aggregate.TaskRuns("dqn", "memory:CartPole-v1", (22.55, 475.0)),
        aggregate.TaskRuns("sac", PENDULUM, ()),  # no runs
    ]
    suites, left_out = aggregate.aggregate(entries, reps=200)
    assert [s.suite for s in suites] == ["classic control", "memory"] and left_out == ["gymnasium:Acrobot-v1"]
    (ppo,) = suites[0].agents
    assert ppo.tasks == (CARTPOLE, PENDULUM) and (ppo.runs, ppo.most_runs) == (2, 3)
    assert ppo.iqm == pytest.approx(1.0) and ppo.iqm_interval == pytest.approx((1.0, 1.0))
    (dqn,) = suites[1].agents
    assert dqn.mean == pytest.approx(0.5) and dqn.iqm_interval == pytest.approx((0.0, 1.0))

    paths = aggregate.write_plots(suites, str(tmp_path))
    assert sorted(os.path.basename(p) for p in paths.values()) == ["rliable_classic_control.png", "rliable_memory.png"]
    text = aggregate.section(suites, left_out, paths, str(tmp_path))
    assert f"| classic control | ppo | 2: {CARTPOLE}, {PENDULUM} | 2 (first 2 of up to 3) | 1.00 [1.00, 1.00] |" in text
    assert "| memory | dqn | 1: memory:CartPole-v1 | 2 | 0.50 [0.00, 1.00] | 0.50 [0.00, 1.00] |" in text
    assert "Left out for want of a random-policy return and target in baselines/normalisation.py: " in text
    assert "(final return - random) / (target - random)" in text
    assert "![memory performance profiles](rliable_memory.png)" in text


def test_the_report_of_the_recorded_results_has_the_aggregate_section_and_a_profile_plot_per_suite(tmp_path):
    written = report.report(output_dir=str(tmp_path), readme=None)
    text = (tmp_path / "README.md").read_text()
    assert text.index("## Over seeds") < text.index("## Aggregate statistics (rliable)") < text.index("## Per seed")
    assert "| suite | agent | tasks | seeds | IQM [95% CI] | mean normalised score [95% CI] |" in text
    suites = {aggregate.suite_of(e) for e in {run.environment for run in report.load_records()}}
    for suite in suites:
        assert f"| {suite} | " in text
        assert os.path.join(str(tmp_path), "plots", aggregate.plot_name(suite)) in written
    assert "Left out for want" not in text  # every recorded task has its normaliser


def test_a_published_peer_is_aggregated_beside_an_agent_only_where_it_has_a_figure_on_every_task():
    games = [f"jax:MinAtar-{game}" for game in ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders")]
    scales = [normalisation.scale_of(game) for game in games]
    at = lambda s, score: s.random_return + score * (s.target_return - s.random_return)  # noqa: E731
    peer_scores = [0.5, 1.0, 1.5, 2.0, 10.0]  # IQM: the middle three (int(5/4) = 1 left out at each end)
    entries = [
        aggregate.TaskRuns("ppo", game, (at(s, 1.0),) * 4, published=at(s, score), published_by="pgx")
        for game, s, score in zip(games, scales, peer_scores)
    ]
    entries += [
        aggregate.TaskRuns("dqn", game, (at(s, 1.0),), published=at(s, 1.0), published_by="pgx")
        for game, s in zip(games, scales)
    ]
    entries[-1] = aggregate.TaskRuns("dqn", games[-1], (1.0,))  # no figure on one task: no peer row for dqn
    (suite,) = aggregate.aggregate(entries, reps=50)[0]
    (peer,) = suite.published
    assert (peer.agent, peer.library, peer.tasks) == ("ppo", "pgx", tuple(games))
    assert peer.iqm == pytest.approx(1.5) and peer.mean == pytest.approx(3.0)
    text = aggregate.section([suite], [], {}, ".")
    assert (
        f"| MinAtar | ppo's published peer: pgx | 5: {', '.join(games)} | one figure per task | 1.50 | 3.00 |" in text
    )


def test_a_references_figure_is_its_first_number():
    assert [references.REFERENCES[key].value for key in (("ppo", "jax:MinAtar-Asterix"), ("dqn", "atari:Pong"))] == [
        11.0,
        -18.55,
    ]
