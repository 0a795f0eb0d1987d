"""The searchers' benchmark (benchmarks/searchers.py): the simulated space's true scores from the TSDAE paper's
tables, the regimes against the configurations' spread, the learning curve, the regret at a compute level, one
simulated sweep's accounting, the answer rules, and its record's table and rows from a tiny run."""

import math

import pytest

from benchmarks import searchers
from sentsweep.experiments.tsdae.published import TABLE_6, TABLE_7


def test_the_true_scores_pass_through_the_papers_tables_and_the_best_is_ratio_0_6_with_mean_pooling():
    for ratio, score in TABLE_6.items():
        assert searchers.true_score(ratio, "cls") == pytest.approx(score)
    assert searchers.true_score(0.6, "max") == pytest.approx(TABLE_7["max"])
    assert TABLE_6[0.6] > searchers.true_score(0.65, "cls") > TABLE_6[0.7]  # shape-preserving between ratios
    assert searchers.BEST_SCORE == pytest.approx(TABLE_7["mean"])


def test_one_regime_has_seeds_disagreeing_more_than_the_configurations_differ_and_one_less():
    spread = searchers.space_spread()
    assert spread == pytest.approx(0.63, abs=0.01)
    assert searchers.REGIMES[searchers.NOISY_REGIME] == 1.1 > spread > searchers.REGIMES["seeds disagree less"] == 0.4


def test_a_runs_curve_rises_to_its_final_score():
    values = [searchers.curve(78.0, -0.5, rung) for rung in range(1, searchers.RUNGS + 1)]
    assert values == sorted(values)
    assert values[-1] == 77.5 and values[0] == pytest.approx(77.5 - searchers.CURVE_RISE * (8 / 9) ** 2)


def test_the_regret_at_a_level_is_that_of_the_last_answer_given_by_then():
    trace = [(3.0, 0.9), (6.0, 0.4), (7.5, 0.2)]
    assert searchers.regret_at(trace, levels=(2, 3, 6, 7, 36)) == pytest.approx([math.nan, 0.9, 0.4, 0.4, 0.2],
                                                                                  nan_ok=True)


def test_a_sweep_without_stopping_runs_its_budget_in_whole_configurations_on_every_seed():
    trials, log = searchers.simulate_sweep("random search", sweep=0, seed_sd=1.1)
    assert [spent for spent, _ in log] == [3.0 * k for k in range(1, searchers.CONFIGURATIONS + 1)]
    assert [number for _, number in log] == [trial.number for trial in trials]
    again, _ = searchers.simulate_sweep("random search", sweep=0, seed_sd=1.1)  # seeded by the sweep's number
    assert [trial.params for trial in again] == [trial.params for trial in trials]


def test_each_rule_answers_from_the_configurations_ended_by_each_level():
    trials, log = searchers.simulate_sweep("random search", sweep=2, seed_sd=1.1, budget=12)
    regrets = searchers.regrets_by_rule(trials, log, [searchers.MEAN, searchers.MODEL], levels=(2, 6, 12))
    best_of_two = max(trials[:2], key=lambda trial: trial.value).user_attrs["true_score"]
    assert math.isnan(regrets[searchers.MEAN][0])  # nothing ended by 2 trials
    assert regrets[searchers.MEAN][1] == pytest.approx(searchers.BEST_SCORE - best_of_two)
    assert all(regret >= 0 for rule in regrets.values() for regret in rule[1:])


@pytest.mark.parametrize("searcher", ["Hyperband (random configurations)", "rung-gp"])
def test_a_multi_fidelity_searcher_stops_configurations_and_spends_at_most_a_configuration_over_the_budget(searcher):
    _, log = searchers.simulate_sweep(searcher, sweep=1, seed_sd=1.1, budget=24)
    steps = [later - earlier for (earlier, _), (later, _) in zip(log, log[1:])]
    assert any(step < searchers.SEEDS_PER_CONFIGURATION for step in steps)  # some stopped before the end
    assert 24 <= log[-1][0] < 24 + searchers.SEEDS_PER_CONFIGURATION
    assert searchers.simulate_sweep(searcher, sweep=1, seed_sd=1.1, budget=24)[1] == log  # the same brackets again


def test_the_record_has_every_row_in_each_regime_and_the_goal_on_noise_gp_where_seeds_disagree_more():
    regrets = searchers.run_sweeps(sweeps=2, workers=1, budget=12)
    assert set(regrets) == set(searchers.REGIMES)
    for by_row in regrets.values():
        assert set(by_row) == set(searchers.ROWS)
        assert all(values.shape == (2, len(searchers.COMPUTE_LEVELS)) for values in by_row.values())
        assert searchers.table(by_row).count("\n") == len(searchers.ROWS) + 1
    rows = searchers.results(regrets)
    goals = [result for result in rows if result.goal is not None]
    assert [result.name for result in goals] == [f"noise-gp against TPE (mean only), {searchers.NOISY_REGIME}, "
                                                 f"{searchers.BUDGET} trials"]
    assert len(rows) == 2 * (len(searchers.ROWS) - 1)
