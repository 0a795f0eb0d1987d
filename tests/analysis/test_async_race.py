"""The race without round barriers (sentsweep.analysis.async_racing) and the slot-filling schedule simulation
(sentsweep.analysis.schedule)."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from sentsweep.analysis.async_racing import AsyncRace, studentized_range_cdf, tukey_critical
from sentsweep.analysis.racing import BEST, ELIMINATED, RACING, TIED, Race
from sentsweep.analysis.schedule import FixedGrid, simulate_schedule
from sentsweep.analysis.significance import adjust_p_values

SEEDS = [0, 1, 2, 3, 4]


def table_of(true: dict, rng, sd: float = 1.0) -> dict:
    """{(config, seed): true mean + N(0, sd)}."""
    return {(config, seed): mean + rng.normal(0, sd) for config, mean in true.items() for seed in SEEDS}


def run_in_order(race, scores: dict, slots: int, rng) -> None:
    """Runs `race` to its end with `slots` slots, each finished trial picked at random among those running (every
    arrival order is possible)."""
    running = []
    while True:
        while len(running) < slots and (trial := race.next_trial()) is not None:
            running.append(trial)
        if not running:
            return
        trial = running.pop(int(rng.integers(len(running))))
        race.record(*trial, scores[trial])


# --- the studentized range -----------------------------------------------------------------------------------


def test_studentized_range_equals_scipys_adaptive_quadrature():
    for q, k, df in [(5.82, 27, 26), (4.04, 3, 8), (17.97, 2, 1), (3.0, 5, 104), (6.8, 4, 3)]:
        assert studentized_range_cdf(q, k, df) == pytest.approx(stats.studentized_range.cdf(q, k, df), abs=1e-10)
    assert tukey_critical(0.05, 27, 26) == pytest.approx(stats.studentized_range.ppf(0.95, 27, 26), abs=1e-8)
    assert studentized_range_cdf(-1.0, 4, 3) == 0.0 and studentized_range_cdf(math.inf, 4, 3) == 1.0


# --- error control under the null ----------------------------------------------------------------------------


def test_under_the_null_a_whole_race_drops_something_in_at_most_alpha_of_races_and_the_round_race_does_not():
    """The guarantee's test: 27 equal configurations, 5 seeds, alpha 0.20, N(0, 1) noise, 16 slots and random
    durations (so random arrival orders), 1,000 races. The chance that ANY configuration is dropped stays within
    alpha + 3 Monte Carlo standard errors; the round race on the same draws drops some configuration in most
    races (its alpha is per round and its leader is the largest of 27 means)."""
    rng = np.random.default_rng(31)
    races, alpha, configs = 1000, 0.20, list(range(27))
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / races)
    dropped = {AsyncRace: 0, Race: 0}
    for _ in range(races):
        scores = table_of(dict.fromkeys(configs, 0.0), rng)
        durations = {trial: rng.exponential(1.0) for trial in scores}
        for kind in dropped:
            race = kind(configs, SEEDS, alpha=alpha)
            simulate_schedule(race, durations, scores, slots=16)
            assert race.finished
            dropped[kind] += bool(race.eliminated)
    assert dropped[AsyncRace] / races <= bound
    assert dropped[Race] / races > bound


def test_under_the_null_the_paired_t_over_every_ordered_pair_keeps_alpha_over_the_race_too():
    rng = np.random.default_rng(39)
    races, alpha, configs = 400, 0.20, list(range(10))
    dropped = 0
    for _ in range(races):
        scores = table_of(dict.fromkeys(configs, 0.0), rng)
        race = AsyncRace(configs, SEEDS, alpha=alpha, test="paired t")
        simulate_schedule(race, {trial: rng.exponential(1.0) for trial in scores}, scores, slots=8)
        dropped += bool(race.eliminated)
    assert dropped / races <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / races)


# --- decisions --------------------------------------------------------------------------------------------


def test_decisions_are_the_same_whatever_the_arrival_order_and_the_number_of_slots():
    rng = np.random.default_rng(32)
    true = {"a": 3.0, "b": 2.8, "c": 2.0, "d": 1.6, "e": 1.0, "f": 0.0, "g": -3.0, "h": 2.9}
    scores = table_of(true, rng, sd=0.5)
    scores[("b", 1)] = scores[("c", 3)] = None  # failed trials: Tukey-Kramer over the shared seeds
    outcomes = set()
    for slots in (1, 3, 8, 40):
        for _ in range(5):
            race = AsyncRace(list(true), SEEDS)
            run_in_order(race, scores, slots, rng)
            # n and the mean too: a seed run ahead past the level that decided a configuration is not counted
            outcomes.add((repr(race.status()), tuple(map(tuple, race.counted_seeds().values()))))
    assert len(outcomes) == 1
    status = race.status()  # (nan != nan: the outcomes are compared by their repr)
    levels = {s.why.split(" after ")[1].split(" seeds")[0] for s in status.values() if s.state == ELIMINATED}
    assert len(levels) >= 2  # eliminations at different levels, so the order of arrival had a chance to matter
    assert [s.state for s in status.values()].count(BEST) == 1


def test_family_level_makes_the_round_races_eliminations_without_its_barrier():
    rng = np.random.default_rng(38)
    true = {"a": 3.0, "b": 2.8, "c": 2.0, "d": 1.6, "e": 1.0, "f": 0.0, "g": -3.0, "h": 2.9}
    for test in ("pooled t", "paired t"):
        scores = table_of(true, rng, sd=0.8)
        by_rounds = Race(list(true), SEEDS, test=test)
        simulate_schedule(by_rounds, dict.fromkeys(scores, 1.0), scores, slots=4)
        expected = [(s.state, s.why, repr(s.p_adjusted)) for s in by_rounds.status().values()]
        assert len({why.split(" after ")[1] for state, why, _ in expected if state == ELIMINATED}) >= 2
        for slots in (1, 5, 40):
            race = AsyncRace(list(true), SEEDS, test=test, family="level")
            run_in_order(race, scores, slots, rng)
            assert [(s.state, s.why, repr(s.p_adjusted)) for s in race.status().values()] == expected
    with pytest.raises(ValueError, match="unknown family 'round'"):
        AsyncRace(list(true), SEEDS, family="round")


def test_with_a_tolerance_the_leader_is_never_dropped():
    scores = {(config, seed): 70.0 + 0.01 * seed + (0.001 if config == "b" else 0.0)
              for config in "ab" for seed in SEEDS}
    race = AsyncRace(["a", "b"], SEEDS, tolerance=5.0)  # a and b cannot beat each other by 5: both "worse"
    simulate_schedule(race, dict.fromkeys(scores, 1.0), scores, slots=2)
    status = race.status()
    assert race.finished and status["b"].state == BEST and status["b"].why == "the only config left after 2 seeds"
    assert status["a"].state == ELIMINATED and "unable to beat by 5 or more b" in status["a"].why


def test_an_obvious_loser_is_dropped_at_the_first_level_by_tukeys_range_computed_by_hand():
    rng = np.random.default_rng(33)
    true = {"a": 80.0, "b": 79.8, "c": 79.7, "bad": 50.0}
    scores = table_of(true, rng, sd=0.5)
    race = AsyncRace(list(true), SEEDS)
    handed = [race.next_trial() for _ in range(8)]
    assert handed == [(config, seed) for seed in (0, 1) for config in true]  # the first level, seed by seed
    for trial in handed:
        race.record(*trial, scores[trial])
    status = race.status()
    assert status["bad"].state == ELIMINATED and race.open_level == 3
    table = np.array([[scores[(config, seed)] for seed in (0, 1)] for config in true])
    residuals = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
    s = math.sqrt((residuals ** 2).sum() / 3)  # (4 - 1)(2 - 1) degrees of freedom
    statistic = (table[:3].mean(axis=1).max() - table[3].mean()) / (s / math.sqrt(2))
    critical = stats.studentized_range.ppf(1 - 0.20 / 4, 4, 3)  # alpha / 4 levels (2, 3, 4 and 5 seeds)
    assert statistic > critical
    assert status["bad"].why.startswith(f"significantly worse than {list(true)[int(table[:3].mean(axis=1).argmax())]}"
                                        f" after 2 seeds (Tukey's range statistic {statistic:.3g} > q = "
                                        f"{critical:.3g} at 0.2 / 4 levels, 4 configs, 3 df")
    assert status["bad"].p_adjusted == pytest.approx(4 * stats.studentized_range.sf(statistic, 4, 3), rel=1e-6)
    for config in ("a", "b", "c"):
        assert status[config].state == RACING


def test_paired_t_adjusts_every_ordered_pair_together_at_alpha_over_the_levels():
    rng = np.random.default_rng(34)
    true = {"a": 75.0, "b": 74.0, "c": 73.0, "d": 70.0}
    scores = table_of(true, rng, sd=0.6)
    race = AsyncRace(list(true), SEEDS, initial_seeds=3, test="paired t")
    for _ in range(12):
        trial = race.next_trial()
        race.record(*trial, scores[trial])
    pairs = [(b, c) for b in true for c in true if b != c]
    raw = [stats.ttest_rel([scores[(b, s)] for s in (0, 1, 2)], [scores[(c, s)] for s in (0, 1, 2)],
                           alternative="greater").pvalue for b, c in pairs]
    adjusted = dict(zip(pairs, adjust_p_values(raw, "holm")))
    status = race.status()
    leader = max(true, key=lambda c: np.mean([scores[(c, s)] for s in (0, 1, 2)]))
    for config in true:
        if config == leader:
            assert math.isnan(status[config].p_adjusted)
            continue
        expected = min(1.0, 3 * min(adjusted[(b, config)] for b in true if b != config))  # 3 levels: 3, 4, 5
        assert status[config].p_adjusted == pytest.approx(expected, rel=1e-9)
        assert (status[config].state == ELIMINATED) == (expected < 0.20)


def test_failed_trials_are_compared_over_shared_seeds_and_all_failed_configs_are_dropped():
    scores = {("a", 0): 70.0, ("a", 1): 71.0, ("b", 0): 69.0, ("b", 1): None, ("crash", 0): None,
              ("crash", 1): float("nan")}
    race = AsyncRace(["a", "b", "crash"], SEEDS)
    for _ in range(6):
        trial = race.next_trial()
        race.record(*trial, scores[trial])
    status = race.status()
    assert status["crash"].state == ELIMINATED and status["crash"].why == "every trial failed (2 seeds)"
    assert (status["b"].n, status["b"].failed, status["b"].state) == (1, 1, RACING)
    assert status["b"].why.startswith("not tested after 2 seeds")  # 1 seed shared with a
    assert [race.next_trial() for _ in range(2)] == [("a", 2), ("b", 2)]  # level 3, in the configurations' order
    assert [race.next_trial() for _ in range(2)] == [("a", 3), ("b", 3)]  # run ahead: a's mean 70.5 first
    assert [race.next_trial() for _ in range(2)] == [("a", 4), ("b", 4)]  # as deep as the seeds go
    assert race.next_trial() is None


def test_the_budget_stops_the_handing_out_and_ends_with_the_leader_best():
    rng = np.random.default_rng(35)
    scores = table_of(dict.fromkeys("abcd", 70.0), rng)
    race = AsyncRace(list("abcd"), SEEDS, max_trials=10)
    first = [race.next_trial() for _ in range(8)]
    assert race.next_trial() is None  # no run-ahead on a budget: the level's decisions come first
    for trial in first:
        race.record(*trial, scores[trial])
    assert not race.eliminated and race.open_level == 3  # (equal configurations, none dropped here)
    running = [race.next_trial(), race.next_trial()]
    assert running == [("a", 2), ("b", 2)] and race.next_trial() is None and race.trials_issued == 10
    for trial in running:
        assert not race.finished
        race.record(*trial, scores[trial])
    status = race.status()
    assert race.finished and sorted(s.state for s in status.values()) == [BEST, TIED, TIED, TIED]
    assert all("trial budget reached" in s.why for s in status.values())
    assert status[race.best].why.endswith("(10 of 10 trials run)")


def test_run_ahead_goes_shallowest_first_best_mean_first_as_deep_as_the_seeds_and_counts_only_kept_seeds():
    rng = np.random.default_rng(36)
    true = {"a": 0.0, "b": 0.3, "c": 0.1, "d": 0.2}
    scores = table_of(true, rng, sd=0.01)
    race = AsyncRace(list(true), SEEDS)
    first = [race.next_trial() for _ in range(8)]
    for trial in first[:-1]:  # ("d", 1) still running: level 2 stays open
        race.record(*trial, scores[trial])
    ahead = [race.next_trial() for _ in range(12)]
    # every configuration's seed 2 (best current mean first), then seed 3, then seed 4: no slot idles while a
    # configuration alive has a seed left
    assert ahead == [(config, seed) for seed in (2, 3, 4) for config in "bdca"]
    assert race.next_trial() is None
    for slots in (4, 30):
        race = AsyncRace(list(true), SEEDS, alpha=0.01)
        simulate_schedule(race, {trial: rng.uniform(0.5, 1.5) for trial in scores}, scores, slots)
        assert race.finished
        # a seed run ahead of a configuration a level then dropped is not counted: each counts the seeds up to the
        # level that decided it, whatever ran
        for config, status in race.status().items():
            assert race.counted_seeds()[config] == SEEDS[:status.n]


def test_the_trials_of_a_dropped_configuration_and_those_left_at_the_end_are_unneeded_and_stopped():
    scores = {(config, seed): value for config, values in {"a": (80.0, 81.0, 80.5, 80.7, 80.2),
                                                             "b": (79.0, 81.5, 80.0, 80.9, 80.1),
                                                             "bad": (50.0, 51.0, 50.5, 50.2, 50.9)}.items()
              for seed, value in zip(SEEDS, values)}
    race = AsyncRace(["a", "b", "bad"], SEEDS, alpha=0.5)
    out = [race.next_trial() for _ in range(9)]
    assert out[6:] == [("a", 2), ("b", 2), ("bad", 2)]  # the first level, then seed 2 run ahead
    for trial in out[:6]:
        assert race.reached(*trial, 0.5, scores[trial]) == "continue"
        race.record(*trial, scores[trial])
    assert race.eliminated == ["bad"] and race.unneeded() == [("bad", 2)]
    assert race.reached("bad", 2, 0.5, 50.0) == "stop"
    race.record_stopped("bad", 2)
    assert race.unneeded() == [] and race.trials_stopped == 1 and race.status()["bad"].n == 2
    with pytest.raises(ValueError, match="already recorded"):
        race.record("bad", 2, 50.0)
    with pytest.raises(ValueError, match="not issued"):
        race.record_stopped("a", 4)


def test_a_race_pickled_mid_race_goes_on_as_the_original():
    rng = np.random.default_rng(37)
    scores = table_of({"a": 1.0, "b": 0.0, "c": 0.9, "d": -2.0}, rng, sd=0.5)
    race = AsyncRace(list("abcd"), SEEDS)
    running = [race.next_trial() for _ in range(9)]
    for trial in running[:5]:
        race.record(*trial, scores[trial])
    copy = pickle.loads(pickle.dumps(race))
    for twin in (race, copy):
        for trial in running[5:]:
            twin.record(*trial, scores[trial])
        while (trial := twin.next_trial()) is not None:
            twin.record(*trial, scores[trial])
    assert copy.finished and repr(race.status()) == repr(copy.status())  # (repr: nan == nan)
    assert copy.trials_issued == race.trials_issued and race.eliminated == ["d"]


def test_a_result_arriving_after_the_race_finished_is_accepted():
    scores = {("a", 0): 80.0, ("a", 1): 81.0, ("b", 0): 10.0, ("b", 1): 11.0, ("a", 2): 80.5, ("b", 2): 9.0}
    race = AsyncRace(["a", "b"], SEEDS[:3], alpha=0.5)
    running = [race.next_trial() for _ in range(6)]
    assert running[4:] == [("a", 2), ("b", 2)]  # run ahead while the first level runs
    for trial in running[:4]:
        race.record(*trial, scores[trial])
    assert race.finished and race.status()["a"].state == BEST and race.pending() == [("a", 2), ("b", 2)]
    assert race.next_trial() is None
    for trial in running[4:]:
        race.record(*trial, scores[trial])  # speculative trials still running at the end: accepted
    assert race.status()["a"].state == BEST and race.pending() == []
    # the level that ended the race counted seeds 0 and 1: seed 2 ran ahead or not as the results' order fell
    assert race.status()["a"].n == 2 and race.counted_seeds() == {"a": [0, 1], "b": [0, 1]}
    with pytest.raises(ValueError, match="already recorded"):
        race.record("a", 2, 1.0)
    lone = AsyncRace(["a"], SEEDS[:3])  # a lone configuration runs nothing ahead: the level's close ends it
    assert simulate_schedule(lone, dict.fromkeys(scores, 1.0), scores, slots=3) == (1.0, 2.0, 2)
    assert lone.status()["a"].state == BEST and lone.status()["a"].why == "the only config"


# --- the schedule simulation -------------------------------------------------------------------------------


def test_simulated_schedule_on_two_slots_by_hand():
    """2 configs x 3 seeds on 2 slots, (a, 0) 1 s, (b, 0) 5 s, every other trial 1 s, issue order seed by seed.
    Grid: a0 [0, 1], b0 [0, 5], a1 [1, 2], b1 [2, 3], a2 [3, 4], b2 [4, 5]: 5 s.
    Round race: a0, b0, a1 [1, 2], b1 [2, 3], then the barrier waits for b0 (5 s); a2 and b2 [5, 6]: 6 s.
    AsyncRace: a0, b0, a1 [1, 2], b1 [2, 3]; run ahead: b2 [3, 4] (b's mean 10.9 beats a's 10.5), a2 [4, 5]: 5 s.
    Busy: 5 + 5 x 1 = 10 trial-seconds each."""
    scores = {("a", 0): 10.0, ("a", 1): 11.0, ("a", 2): 12.0, ("b", 0): 10.5, ("b", 1): 10.9, ("b", 2): 11.8}
    durations = dict.fromkeys(scores, 1.0) | {("b", 0): 5.0}
    grid = FixedGrid([(config, seed) for seed in (0, 1, 2) for config in "ab"])
    assert simulate_schedule(grid, durations, scores, slots=2) == (5.0, 10.0, 6)
    race = Race(["a", "b"], [0, 1, 2])
    assert simulate_schedule(race, durations, scores, slots=2) == (6.0, 10.0, 6)
    assert race.finished and race.status()["a"].state == TIED
    race = AsyncRace(["a", "b"], [0, 1, 2])
    assert simulate_schedule(race, durations, scores, slots=2) == (5.0, 10.0, 6)
    assert race.finished and race.status()["b"].state == BEST  # 11.067 against a's 11.0, tied
    with pytest.raises(ValueError, match="slots=0"):
        simulate_schedule(FixedGrid([]), durations, scores, slots=0)
    with pytest.raises(ValueError, match="no duration"):
        simulate_schedule(FixedGrid([("c", 0)]), durations, scores, slots=1)
