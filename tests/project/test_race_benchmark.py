"""The pure parts of benchmarks/race_through_ray.py on hand-made numbers: utilisation, the answer, the goal
checks and the tables. The benchmark itself runs in benchmarks/ (`make benchmarks`; `--tiny`, every way end to end
at the least scale, in minutes): the sweeps it runs are the suite's own (the grid, `--race` and `--race-schedule
steps` in tests/sweep/test_sweeps_quick.py and tests/sweep/test_fault_matrix.py)."""

import pytest

from benchmarks.race_through_ray import (
    PARTS,
    Trial,
    Way,
    answer,
    goal_checks,
    overhead_table,
    simulate,
    utilisation,
    ways_table,
)

# A beats B on every seed by 10, 11, 9 points: paired t = 10 / (1 / sqrt(3)) = 17.3 on 2 df, p = 0.0033, so B is
# out of A's group at alpha 0.05 (one pair: Holm changes nothing).
A_SCORES, B_SCORES = (80.0, 81.0, 82.0), (70.0, 70.0, 73.0)
GRID_PARTS = {"preparation_seconds": 1.0, "evaluation_seconds": 2.0, "checkpoint_seconds": 0.5}


def grid_way(wall_clock: float = 40.0) -> Way:
    trials = [Trial(config, seed, 10.0, score, GRID_PARTS)
              for config, scores in (("A", A_SCORES), ("B", B_SCORES)) for seed, score in enumerate(scores)]
    return Way("grid", tuple(trials), wall_clock, slots=2, write_seconds=1.5)


def race_way(best_scores=A_SCORES) -> Way:  # A's 3 seeds and B's first, 10 s each, in 20 s on 2 slots
    trials = [Trial("A", seed, 10.0, score) for seed, score in enumerate(best_scores)] + [Trial("B", 0, 10.0, 70.0)]
    return Way("race", tuple(trials), 20.0, slots=2)


def test_utilisation_is_busy_seconds_over_the_slots_time():
    assert utilisation(60.0, 2, 40.0) == 0.75
    assert grid_way().utilisation == 60.0 / (2 * 40.0)


def test_answer_is_the_best_mean_and_its_significance_group():
    assert answer(grid_way().scores()) == ("A", ["A"])
    # with B equal to A on average, B stays in the group
    assert answer({"A": {0: 80.0, 1: 81.0, 2: 82.0}, "B": {0: 81.0, 1: 80.0, 2: 82.0}}) == ("A", ["A", "B"])


def test_a_failed_or_stopped_trial_has_no_score_and_counts_its_seconds():
    way = Way("w", (Trial("A", 0, 5.0, 1.0), Trial("A", 1, 5.0, None), Trial("B", 0, 1.0, None, stopped=True)), 5.0,
              slots=2)
    assert way.scores() == {"A": {0: 1.0}} and way.trial_seconds == 11.0 and way.stopped == 1


def plain_way(wall_clock: float = 60.0) -> Way:  # the grid's 6 trials at 15 s each: 90 trial-seconds
    return Way("plain", tuple(Trial(t.config, t.seed, 15.0, t.score) for t in grid_way().trials), wall_clock, slots=2)


def test_goal_checks_say_which_goal_is_missed_and_by_how_much():
    # race: 40 of plain's 90 trial-seconds (0.44x, goal <= 1/3), 20 of its 60 s of wall-clock (0.33x, goal <= 0.5x);
    # on 16 simulated slots 20 s against the grid's 10 s (2.00x, goal <= 1x), 40 of its 60 trial-seconds
    lines = goal_checks(plain_way(), grid_way(), [race_way()], {16: {"grid": (10.0, 60.0, 6), "race": (20.0, 40.0, 4)}})
    assert lines[0] == "PASS: race: the answer is the grid's (A)"
    assert lines[1].startswith("MISSED: race: compute 0.44x of plain Ray Tune's (goal <= 0.33x, missed by 0.11x): it "
                               "ran 4 of the grid's 6 trials (0 stopped early), 10.0 s each against plain Ray Tune's "
                               "15.0 s; the grid's significance group holds 1 of its 2 configurations")
    assert lines[1].endswith("those alone are 0.33x of plain Ray Tune's compute")  # A's 3 seeds x 10 s of 90
    assert lines[2] == "PASS: race: wall-clock 0.33x of plain Ray Tune's (goal <= 0.50x)"
    assert lines[3] == ("MISSED: race on 16 simulated slots: wall-clock 2.00x of the grid's (goal <= 1.00x), compute "
                        "0.67x (goal < 1.00x); slot use 12% against the grid's 38%")
    assert len(lines) == 4


def test_goal_checks_name_a_different_answer_and_whether_the_noise_allows_it():
    # the race's scores make B best, outside the grid's group of A alone
    lines = goal_checks(plain_way(), grid_way(), [race_way(best_scores=(60.0, 60.0, 60.0))], {})
    assert lines[0] == "MISSED: race chose B, the grid A (B is outside the grid's significance group of 1)"


def test_a_missed_wall_clock_says_the_compute_and_the_slots_used():
    slow = Way("race", race_way().trials, 40.0, slots=2)  # 40 of 60 s: 0.67x, goal <= 0.5x
    line = goal_checks(plain_way(), grid_way(), [slow], {})[2]
    assert line == ("MISSED: race: wall-clock 0.67x of plain Ray Tune's (goal <= 0.50x, missed by 0.17x): 44% of the "
                    "compute at 50% slot utilisation against plain Ray Tune's 75%")


def test_ways_table_has_one_row_per_way_with_its_figures():
    table = ways_table([grid_way(), race_way()]).splitlines()
    assert len(table) == 4
    assert table[2] == "| grid | 6 (0) | 60 | 40 | 75% | A (81.00) | 1: A |"
    # the race: 40 trial-seconds in 20 s on 2 slots is 100%; B's one seed cannot be tested, so it stays in
    assert table[3] == "| race | 4 (0) | 40 | 20 | 100% | A (81.00) | 2: A; B |"


def test_overhead_table_lists_each_part_per_trial_and_the_difference():
    plain_trials = tuple(Trial(t.config, t.seed, 8.0, t.score, {"preparation_seconds": 0.5, "evaluation_seconds": 1.0})
                         for t in grid_way().trials)
    plain = Way("plain", plain_trials, 30.0, slots=2)
    rows = overhead_table(grid_way(), plain).splitlines()[2:]
    assert rows == [
        f"| {PARTS['preparation_seconds']} | 1.00 | 0.50 | +0.50 |",
        f"| {PARTS['evaluation_seconds']} | 2.00 | 1.00 | +1.00 |",
        f"| {PARTS['checkpoint_seconds']} | 0.50 | 0.00 | +0.50 |",
        "| training (the rest of the trial) | 6.50 | 6.50 | +0.00 |",  # 10 - 3.5 and 8 - 1.5
        "| outside the trials (slot-seconds not in a trial) | 3.33 | 2.00 | +1.33 |",  # (80 - 60) / 6, (60 - 48) / 6
        "| MLflow writes (in the driver, while trials run: they delay starts, not steps) | 0.25 | 0.00 | +0.25 |",
    ]


def test_the_simulation_schedules_the_measured_trials_on_more_slots():
    # 6 trials of 10 s on 4 slots. The grid runs 4, then 2: 20 s, 60 trial-seconds. The races start with A and B
    # on seeds 0 and 1 (4 trials at once), which end together at 10 s. The round race drops B after them (pooled t,
    # Holm p = 0.015 < 0.2) and ends at 10 s. The asynchronous races take the results one at a time: the slots the
    # first ones free get both third seeds, run ahead; then the level closes, drops B (Tukey's range 29.7 > q = 8.9
    # at 0.2 / 2 levels on 1 residual df; the per-level race as the round race) and so ends the race with A alone,
    # and both third seeds, unneeded, are stopped as they start: 10 s, 40 trial-seconds, 6 trials started. A
    # setting the races do not take is left out.
    settings = {"seeds": [0, 1, 2], "initial_seeds": 2, "alpha": 0.2, "correction": "holm", "max_trials": None,
                "test": "pooled t", "tolerance": 0.0, "a setting the races do not take": 1}
    assert simulate(grid_way(), settings, [4]) == {4: {"grid": (20.0, 60.0, 6), "async race": (10.0, 40.0, 6),
                                                       "async-per-level race": (10.0, 40.0, 6),
                                                       "rounds race": (10.0, 40.0, 4)}}


def test_with_the_grids_scores_at_the_rungs_the_race_over_steps_is_simulated_too():
    # B is 10 points behind at the rung (1/9 of each 10 s trial): the rung drops it after 1.1 s of its two first
    # seeds, and A, the only configuration left, ends the race with its two first seeds: 20 + 2 x 1.11 trial-seconds
    rungs = {"A": (70.0, 75.0), "B": (60.0, 65.0)}
    grid = Way("grid", tuple(Trial(t.config, t.seed, t.seconds, t.score, t.parts, rungs=(
        rungs[t.config][0] + t.seed % 2, rungs[t.config][1] - t.seed % 2)) for t in grid_way().trials), 40.0, slots=2)
    settings = {"seeds": [0, 1, 2], "initial_seeds": 2, "alpha": 0.2, "correction": "holm", "max_trials": None,
                "test": "pooled t", "tolerance": 0.0, "rungs": [1 / 9, 1 / 3]}
    wall, busy, started = simulate(grid, settings, [4], races={"steps race": "steps"})[4]["steps race"]
    assert started == 4 and busy == pytest.approx(20.0 + 2 * 10.0 / 9) and wall == pytest.approx(10.0)
