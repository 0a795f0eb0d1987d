"""The pure parts of benchmarks/frontier.py and benchmarks/frontier_ways.py on hand-made numbers: the frontier of
each way, the cheapest setting reaching the target, the goal's verdict, the peers' schedules (ASHA with brackets,
Optuna's pruners with seeds as instances) and the scores at the rungs. The simulation itself runs in benchmarks/
(`python -m benchmarks.frontier --sweeps 2` in a minute)."""

import numpy as np
import optuna
import pytest

from benchmarks.frontier import cheapest_reaching, frontier, goal_check, settings, simulate_sweeps
from benchmarks.frontier_ways import AshaBrackets, OptunaPruned, RungValues, asha_rungs, sorted_quantile
from benchmarks.trained_answer import spread
from benchmarks.trial_overhead import parts
from sentsweep.analysis.racing import CONTINUE, STOP
from sentsweep.analysis.schedule import simulate_schedule
from sentsweep.analysis.step_racing import fraction_text


def test_frontier_keeps_the_points_no_cheaper_point_beats():
    points = [(0.5, 0.90), (0.3, 0.95), (0.8, 0.99), (0.3, 0.80), (1.0, 0.99), (0.2, 0.50)]
    assert frontier(points) == [(0.2, 0.50), (0.3, 0.95), (0.8, 0.99)]


def figures(compute, p, wall=0.5):
    return {"compute": compute, "grids_answer": p, "wall": wall}


def test_cheapest_reaching_is_the_least_compute_at_or_above_the_target():
    rows = {("a", "x"): figures(0.4, 0.96), ("a", "y"): figures(0.2, 0.94), ("a", "z"): figures(0.6, 0.99),
            ("b", "w"): figures(0.1, 0.99)}
    assert cheapest_reaching(rows, {"a"}) == (("a", "x"), rows[("a", "x")])
    assert cheapest_reaching(rows, {"a"}, target=0.995) is None


def result_with(ours: dict, peer: dict, slots=(16, 64)) -> dict:
    return {(way, label, count): value for count in slots
            for (way, label), value in (ours | peer).items()}


def test_goal_met_when_sentsweep_spends_at_most_half_of_the_cheapest_peer_and_no_more_wall_clock():
    ours = {("sentsweep --race", "a"): figures(0.25, 0.97, wall=0.9), ("sentsweep grid", "5 seeds"): figures(1, 1, 1)}
    peer = {("Ray Tune ASHA, seeds as an axis", "b"): figures(0.6, 0.96), ("Ray Tune ASHA, seeds as an axis", "c"):
            figures(0.2, 0.70)}
    met, line = goal_check(result_with(ours, peer), 16)
    assert met and line.startswith("MET on 16 slots: sentsweep's cheapest setting at P >= 95%, sentsweep --race a")
    assert "compute 0.60x (goal: sentsweep's <= 0.5 x 0.60 = 0.30x)" in line


def test_goal_not_met_by_compute_or_by_wall_clock():
    peer = {("Optuna WilcoxonPruner, seeds as instances", "b"): figures(0.4, 0.99)}
    over = {("sentsweep --race", "a"): figures(0.25, 0.97)}
    met, line = goal_check(result_with(over, peer), 64)
    assert not met and line.startswith("NOT MET on 64 slots") and "0.5 x 0.40 = 0.20x" in line
    slow = {("sentsweep --race", "a"): figures(0.1, 0.97, wall=1.2)}
    met, line = goal_check(result_with(slow, peer), 16)
    assert not met and "wall-clock 1.20x on 16, 1.20x on 64 (goal <= 1.00x)" in line


def test_goal_not_met_when_no_sentsweep_setting_or_no_peer_reaches_the_target():
    met, line = goal_check(result_with({("sentsweep --race", "a"): figures(0.2, 0.90)},
                                       {("Ray Tune ASHA, seeds as an axis", "b"): figures(0.4, 0.99)}), 16)
    assert not met and line == "NOT MET on 16 slots: no sentsweep setting gives the grid's answer in >= 95%"
    met, line = goal_check(result_with({("sentsweep --race", "a"): figures(0.2, 0.99)},
                                       {("Ray Tune ASHA, seeds as an axis", "b"): figures(0.4, 0.90)}), 16)
    assert not met and line.endswith("no peer setting reaches 95%, so there is nothing to halve")


def test_asha_rungs_are_the_grace_period_times_powers_of_the_reduction_factor():
    assert asha_rungs(1 / 9, 3) == pytest.approx((1 / 9, 1 / 3))
    assert asha_rungs(1 / 8, 2) == pytest.approx((1 / 8, 1 / 4, 1 / 2))
    with pytest.raises(ValueError, match="brackets=3"):
        asha_rungs(1 / 3, 3, brackets=3)


def test_asha_stops_a_trial_below_the_quantile_of_those_recorded_at_its_rung_and_skips_other_brackets_rungs():
    order = [("a", 0), ("b", 0), ("c", 0), ("d", 0)]
    asha = AshaBrackets(order, 1 / 9, 3, brackets=2)  # a, c in bracket 0 (rungs 1/9, 1/3); b, d in bracket 1 (1/3)
    rung = asha.rungs[0]
    assert asha.reached("a", 0, rung, 5.0) == CONTINUE  # the first at a rung goes on
    assert asha.reached("c", 0, rung, 4.0) == STOP  # below the 2/3 quantile of [5.0]
    assert asha.reached("b", 0, rung, 0.0) == CONTINUE  # bracket 1 does not judge at 1/9
    assert asha.reached("b", 0, asha.rungs[1], 0.0) == CONTINUE and asha.reached("d", 0, asha.rungs[1], -1) == STOP
    asha.record("a", 0, 7.0)
    asha.record("b", 0, 8.0)
    assert asha.answer() == "b"


def test_sorted_quantile_is_numpy_s_linear_percentile():
    rng = np.random.default_rng(1)
    for size in (1, 2, 5, 30):
        values = sorted(rng.normal(size=size))
        for quantile in (0.5, 2 / 3, 0.75):
            assert sorted_quantile(values, quantile) == pytest.approx(np.percentile(values, 100 * quantile))


def test_optuna_pruned_trains_each_configuration_s_seeds_in_turn_and_answers_the_best_complete_one():
    scores = {(config, seed): value + seed for config, value in (("a", 10.0), ("b", 0.0), ("c", 5.0))
              for seed in range(3)}
    durations = dict.fromkeys(scores, 1.0)
    never = OptunaPruned(["a", "b", "c"], [0, 1, 2], optuna.pruners.NopPruner())
    wall, busy, trials = simulate_schedule(never, durations, scores, slots=2)
    # a and b train their 3 seeds in turn on the 2 slots (3 time units), then c alone: 6 units, 9 trials
    assert (wall, busy, trials) == (6.0, 9.0, 9) and never.answer() == "a"
    halving = OptunaPruned(["a", "b", "c"], [0, 1, 2], optuna.pruners.SuccessiveHalvingPruner(1, 2))
    simulate_schedule(halving, durations, scores, slots=1)
    assert halving.answer() == "a" and halving._study.trials[1].state == optuna.trial.TrialState.PRUNED
    with pytest.raises(ValueError, match="report='last'"):
        OptunaPruned(["a"], [0], optuna.pruners.NopPruner(), report="last")


def test_rung_values_are_drawn_once_and_differ_by_configuration_as_the_means_do():
    scores = {("a", 0): 80.0, ("b", 0): 70.0}
    values = RungValues(scores, {"a": 80.0, "b": 70.0}, noise_sd=0.0, rng=np.random.default_rng(0))
    table = values.table((1 / 9, 1 / 3))
    assert table == values.table((1 / 9, 1 / 3))
    assert table[("a", 0)][0] - table[("b", 0)][0] == pytest.approx(10.0)
    assert table[("a", 0)] == pytest.approx([80.0 - 4.0, 80.0 - 1.0])  # the common gap 0.5 x (1 / fraction - 1)


def test_a_simulated_sweep_gives_every_setting_on_every_slot_count_the_same_draws():
    rows = [row for row in settings() if row.label in ("5 seeds", "--race-alpha 0.2")]
    runs = simulate_sweeps(range(1), rows, slot_counts=(4,))
    grid = runs[("sentsweep grid", "5 seeds", 4)][0]
    assert grid[:4] == (1.0, 1.0, True, True)  # the grid against itself
    assert runs[("Ray Tune grid, seeds as an axis", "5 seeds", 4)] == runs[("sentsweep grid", "5 seeds", 4)]
    assert runs[("sentsweep --race", "--race-alpha 0.2", 4)][0][0] < 1.0
    assert simulate_sweeps(range(1), rows, slot_counts=(4,)) == runs


def test_each_race_setting_s_label_is_the_command_line_of_the_race_it_makes():
    races = [row for row in settings() if row.way == "sentsweep --race-schedule steps"]
    assert any("--race-initial-seeds 4" in row.label for row in races)
    for row in races:
        race = row.make(["a", "b"], [0, 1, 2, 3, 4], [])
        words = row.label.split()
        options = {word: words.index(word) for word in words if word.startswith("--")}
        rungs = words[options["--race-rungs"] + 1:options.get("--race-initial-seeds", len(words))]
        assert race.alpha == float(words[options["--race-alpha"] + 1])
        assert [fraction_text(rung) for rung in race.rungs] == rungs
        assert race.initial_seeds == (int(words[-1]) if "--race-initial-seeds" in options else 2)


def test_spread_is_the_range_of_the_configuration_means_in_pooled_seed_sds():
    # a: mean 11, deviations -1, +1; b: mean 5, deviations -2, +2: pooled sd sqrt((2 + 8) / 2) = sqrt(5)
    figures = spread({"a": {0: 10.0, 1: 12.0}, "b": {0: 3.0, 1: 7.0}})
    assert figures["best"] == ("a", 11.0) and figures["worst"] == ("b", 5.0)
    assert figures["seed_sd"] == pytest.approx(5 ** 0.5) and figures["range_sds"] == pytest.approx(6 / 5 ** 0.5)


def test_a_trial_s_parts_are_the_largest_each_report_gives():
    reports = [{"preparation_seconds": 1.5, "sts_dev": 50.0}, {"evaluation_seconds": 2.0, "checkpoint_seconds": 0.3},
               {"evaluation_seconds": 4.0, "checkpoint_seconds": 0.6}]
    assert parts(reports) == {"preparation_seconds": 1.5, "evaluation_seconds": 4.0, "checkpoint_seconds": 0.6}
    assert parts([]) == dict.fromkeys(("preparation_seconds", "evaluation_seconds", "checkpoint_seconds"), 0.0)
