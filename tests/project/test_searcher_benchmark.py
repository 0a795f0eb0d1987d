"""The searchers' benchmark's pure parts (benchmarks/searchers.py): the simulated space's true scores from the TSDAE
paper's tables, the learning curve, the regret at a compute level, and one simulated sweep's accounting."""

import math

import pytest

from benchmarks import searchers
from sentsweep.experiments.tsdae.published import TABLE_6, TABLE_7


def test_the_true_scores_are_the_papers_tables_and_the_best_is_ratio_0_6_with_mean_pooling():
    assert searchers.true_score(0.3, "cls") == pytest.approx(TABLE_6[0.3])
    assert searchers.true_score(0.6, "mean") == pytest.approx(TABLE_7["mean"])
    assert searchers.true_score(0.65, "cls") == pytest.approx((TABLE_6[0.6] + TABLE_6[0.7]) / 2)
    assert searchers.BEST_SCORE == pytest.approx(TABLE_7["mean"])


def test_the_published_seed_sd_is_larger_than_the_configurations_sd_over_the_space():
    spread = searchers.space_spread()
    assert spread == pytest.approx(0.32, abs=0.01)
    assert spread < searchers.NOISE_SD == 0.4


def test_a_runs_curve_rises_to_its_final_score():
    values = [searchers.curve(78.0, -0.5, rung) for rung in range(1, searchers.RUNGS + 1)]
    assert values == sorted(values)
    assert values[-1] == 77.5 and values[0] == pytest.approx(77.5 - searchers.CURVE_RISE * (8 / 9) ** 2)


def test_the_regret_at_a_level_is_that_of_the_last_answer_given_by_then():
    trace = [(3.0, 0.9), (6.0, 0.4), (7.5, 0.2)]
    assert searchers.regret_at(trace, levels=(2, 3, 6, 7, 36)) == pytest.approx([math.nan, 0.9, 0.4, 0.4, 0.2],
                                                                                  nan_ok=True)


def test_a_sweep_without_stopping_runs_its_budget_in_whole_configurations_on_every_seed():
    trace = searchers.simulate_sweep("random search", sweep=0)
    spent = [spent for spent, _ in trace]
    assert spent == [3.0 * k for k in range(1, 9)]
    assert all(regret >= 0 for _, regret in trace)
    assert searchers.simulate_sweep("random search", sweep=0) == trace  # seeded by the sweep's number


@pytest.mark.parametrize("searcher", ["Hyperband (random configurations)", "rung-gp (model per rung, seeds' test)"])
def test_a_multi_fidelity_searcher_stops_configurations_and_spends_at_most_a_configuration_over_the_budget(searcher):
    trace = searchers.simulate_sweep(searcher, sweep=1)
    steps = [later - earlier for (earlier, _), (later, _) in zip(trace, trace[1:])]
    assert any(step < searchers.SEEDS_PER_CONFIGURATION for step in steps)  # some stopped before the end
    assert searchers.BUDGET <= trace[-1][0] < searchers.BUDGET + searchers.SEEDS_PER_CONFIGURATION
