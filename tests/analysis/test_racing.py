"""Multiple-comparison corrections, the group not significantly worse than the best, and racing over seeds."""

import math

import numpy as np
import pytest
from scipy import stats

from sentsweep.analysis.racing import BEST, ELIMINATED, RACING, TIED, Race, pooled_variance
from sentsweep.analysis.significance import adjust_p_values, best_group

SEEDS = [0, 1, 2, 3, 4]


# --- adjust_p_values ---------------------------------------------------------------------------------------


def test_holm_by_hand_with_monotonicity_and_cap():
    # Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, raised to 0.06).
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # Sorted: 0.02 (x3 = 0.06), 0.6 (x2 = 1.2, capped at 1), 0.9 (x1, raised to 1).
    assert adjust_p_values([0.6, 0.9, 0.02], "holm") == pytest.approx([1.0, 1.0, 0.06])
    # NaN (no test) stays NaN and is not counted: m = 2.
    adjusted = adjust_p_values([0.01, float("nan"), 0.02], "holm")
    assert math.isnan(adjusted[1]) and adjusted[[0, 2]] == pytest.approx([0.02, 0.02])


def test_holm_rejects_what_the_step_down_procedure_rejects():
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 12)) ** 2
        alpha = rng.choice([0.01, 0.05, 0.1])
        rejected = set()  # Holm (1979): reject p_(1), p_(2), ... while p_(j) < alpha / (m - j + 1)
        for j, index in enumerate(np.argsort(p, kind="stable")):
            if p[index] >= alpha / (len(p) - j):
                break
            rejected.add(int(index))
        assert set(np.flatnonzero(adjust_p_values(p, "holm") < alpha)) == rejected


def test_bonferroni_and_none():
    p = np.array([0.001, 0.02, 0.3, 0.5])
    assert adjust_p_values(p, "bonferroni") == pytest.approx(np.minimum(1, 4 * p))
    assert adjust_p_values(p, "none") == pytest.approx(p)
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values(p, "fdr")


# --- best_group --------------------------------------------------------------------------------------------


def test_best_group_adjusts_all_pairs_together_and_equals_scipy():
    rng = np.random.default_rng(0)
    true = {"a": 70.0, "b": 69.6, "c": 68.0, "d": 66.0}
    cells = {name: {seed: mean + rng.normal(0, 0.8) for seed in SEEDS} for name, mean in true.items()}
    result = best_group(cells, alpha=0.05, correction="holm")
    names = list(cells)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    raw = [stats.ttest_rel([cells[x][s] for s in SEEDS], [cells[y][s] for s in SEEDS]).pvalue for x, y in pairs]
    holm = dict(zip(pairs, adjust_p_values(raw, "holm")))
    best = max(names, key=lambda name: np.mean(list(cells[name].values())))
    assert result.best == best and result.family_size == 6 and result.correction == "holm"
    for name in names:
        member = result.members[name]
        if name == best:
            assert member.in_best_group and math.isnan(member.p_adjusted)
            continue
        expected = holm.get((best, name), holm.get((name, best)))
        assert member.p_adjusted == pytest.approx(expected, rel=1e-12) and member.test == "paired t"
        assert member.in_best_group == (expected >= 0.05)


def test_best_group_excludes_configs_far_below_the_best():
    rng = np.random.default_rng(1)
    true = {"best": 80.0, "close": 79.9, "worse": 74.0, "worst": 65.0}
    cells = {name: {seed: mean + rng.normal(0, 0.5) for seed in SEEDS} for name, mean in true.items()}
    result = best_group(cells)
    assert set(result.group) == {"best", "close"}
    assert "significantly worse" in result.members["worst"].note
    # Lower is better (a loss): the same table negated gives the same group.
    negated = {name: {s: -v for s, v in by_seed.items()} for name, by_seed in cells.items()}
    assert set(best_group(negated, higher_is_better=False).group) == {"best", "close"}


def test_family_wise_error_under_the_null_stays_at_alpha_with_holm():
    rng = np.random.default_rng(2024)
    alpha, tables = 0.05, 1000
    bound = alpha + 2 * math.sqrt(alpha * (1 - alpha) / tables)
    holm = none = 0
    for _ in range(tables):
        values = rng.normal(70, 1, size=(5, 5))  # 5 configs x 5 seeds, all with the same true mean
        cells = {config: dict(enumerate(row)) for config, row in enumerate(values)}
        holm += len(best_group(cells, alpha, "holm").group) < 5
        none += len(best_group(cells, alpha, "none").group) < 5
    assert holm / tables <= bound
    assert none / tables > bound  # without the correction the same check fails: the test can tell


def test_untested_configs_stay_and_per_query_outcomes_use_the_items_test():
    rng = np.random.default_rng(5)
    cells = {"a": {0: 71.0, 1: 72.0, 2: 71.5}, "b": {0: 60.0, 1: 61.0, 2: 60.2}, "c": {2: 10.0, 7: 11.0}}
    per_query = {config: {seed: (rng.random(40) < rate).astype(float).tolist() for seed in (0, 1, 2)}
                 for config, rate in (("a", 0.8), ("b", 0.3))}
    result = best_group(cells, per_query=per_query)
    assert result.members["c"].in_best_group and result.members["c"].test == "not tested"
    assert "1 seed shared with the best" in result.members["c"].note and result.untested == ["c"]
    member = result.members["b"]
    expected = stats.ttest_rel(np.mean([per_query["a"][s] for s in (0, 1, 2)], axis=0),
                               np.mean([per_query["b"][s] for s in (0, 1, 2)], axis=0)).pvalue
    assert member.test == "paired t over items" and member.p_value == pytest.approx(expected, rel=1e-12)
    assert result.family_size == 1 and not member.in_best_group


def test_failed_runs_are_left_out_and_identical_configs_are_tied():
    cells = {"a": {0: 70.0, 1: 71.0, 2: None}, "b": {0: 69.0, 1: 70.5, 2: float("nan")}, "same": {0: 70.0, 1: 71.0}}
    result = best_group(cells)
    assert result.members["a"].n == 2 and result.members["b"].shared_seeds == 2
    assert result.best == "a" and result.members["same"].p_value == 1.0 and "same" in result.group


# --- Race --------------------------------------------------------------------------------------------------


def run_race(race: Race, scores: dict) -> list[list]:
    """Runs `race` to its end on {config: {seed: value}}; the rounds of trials it issued."""
    rounds = []
    while not race.finished:
        trials = race.next_trials()
        assert trials and race.next_trials() == []  # handed out once, nothing new while the round runs
        rounds.append(trials)
        for config, seed in trials:
            race.record(config, seed, scores[config][seed])
    return rounds


def test_race_pairs_seeds_and_drops_a_clearly_worse_config_after_the_first_round():
    rng = np.random.default_rng(11)
    true = {"a": 80.0, "b": 79.8, "c": 79.7, "bad": 50.0}
    scores = {config: {seed: mean + rng.normal(0, 0.5) for seed in SEEDS} for config, mean in true.items()}
    race = Race(list(true), SEEDS, initial_seeds=2)
    rounds = run_race(race, scores)
    assert rounds[0] == [(config, seed) for seed in (0, 1) for config in true]
    for trials in rounds:  # every config in a round gets the same seed ids
        seeds_of = {}
        for config, seed in trials:
            seeds_of.setdefault(config, set()).add(seed)
        assert len({frozenset(s) for s in seeds_of.values()}) == 1
    assert all(config != "bad" for trials in rounds[1:] for config, _ in trials)
    status = race.status()
    assert status["bad"].state == ELIMINATED and status["bad"].n == 2
    assert status["bad"].why.startswith("significantly worse than a after 2 seeds (Holm-adjusted p = ")
    assert status["bad"].why.endswith(" < 0.2)")  # the race's level, RACE_ALPHA
    assert [s.state for s in status.values()].count(BEST) == 1 and status[race.best].state == BEST
    assert race.trials_issued == sum(len(trials) for trials in rounds)


def test_next_trial_hands_out_the_rounds_one_at_a_time_with_the_barrier_as_none():
    """Slot by slot, `next_trial` gives the trials `next_trials` gives, in the same order, and None while the
    round's trials are all out and a result is still to come; the race ends in the same state."""
    rng = np.random.default_rng(16)
    true = {"a": 80.0, "b": 79.8, "c": 79.7, "bad": 50.0}
    scores = {config: {seed: mean + rng.normal(0, 0.5) for seed in SEEDS} for config, mean in true.items()}
    by_round = Race(list(true), SEEDS)
    rounds = run_race(by_round, scores)
    race = Race(list(true), SEEDS)
    for expected in rounds:
        handed = [race.next_trial() for _ in expected]
        assert handed == expected and race.pending() == expected
        assert race.next_trial() is None and race.next_trials() == []  # the barrier: nothing before the results
        for config, seed in reversed(handed):  # any order of arrival
            assert not race.finished
            race.record(config, seed, scores[config][seed])
    assert race.finished and race.next_trial() is None and race.trials_issued == by_round.trials_issued
    got, expected = race.status(), by_round.status()  # (the p-values up to the rounding of the least squares)
    assert [(s.n, s.state, s.why) for s in got.values()] == [(s.n, s.state, s.why) for s in expected.values()]
    assert [s.p_adjusted for s in got.values()] == pytest.approx([s.p_adjusted for s in expected.values()],
                                                                 rel=1e-9, nan_ok=True)
    partial = Race(list(true), SEEDS)
    first = partial.next_trial()
    partial.record(*first, scores[first[0]][first[1]])  # one result in, the rest of the round not handed out
    assert partial.next_trial() == rounds[0][1] and partial.trials_issued == 2
    with pytest.raises(ValueError, match="not issued"):
        partial.record(*rounds[0][2], 1.0)
    assert partial.next_trials() == rounds[0][2:]  # the rest of the round at once


def test_equal_configs_end_tied_at_the_last_seed():
    rng = np.random.default_rng(12)
    scores = {config: {seed: 70 + rng.normal(0, 1) for seed in SEEDS} for config in "abcd"}
    race = Race(list("abcd"), SEEDS, test="paired t", alpha=0.05)  # (the pooled t drops one at p = 0.048)
    assert all(s.state == RACING for s in race.status().values())
    run_race(race, scores)
    status = race.status()
    best = max("abcd", key=lambda c: np.mean(list(scores[c].values())))
    assert race.best == best and status[best].state == BEST
    assert "maximum of 5 seeds" in status[best].why
    for config in "abcd":
        assert status[config].n == 5
        if config != best:
            assert status[config].state == TIED and "tied with the best at the maximum of 5 seeds" in status[config].why
    assert race.trials_issued == 20


def test_first_round_p_values_equal_scipy_and_pooled_variance_equals_two_way_anova():
    rng = np.random.default_rng(13)
    true = {"a": 75.0, "b": 74.0, "c": 73.0, "d": 72.5}
    scores = {config: {seed: mean + rng.normal(0, 0.6) for seed in SEEDS} for config, mean in true.items()}
    table = np.array([[scores[c][s] for s in SEEDS[:3]] for c in true])
    leader = int(np.argmax(table.mean(axis=1)))
    others = [i for i in range(4) if i != leader]
    for test in ("paired t", "pooled t"):
        race = Race(list(true), SEEDS, initial_seeds=3, alpha=0.01, test=test)
        for config, seed in race.next_trials():
            race.record(config, seed, scores[config][seed])
        if test == "paired t":
            raw = [stats.ttest_rel(table[leader], table[i], alternative="greater").pvalue for i in others]
        else:  # residuals of config + seed: double centring; (k - 1)(n - 1) = 6 degrees of freedom
            residuals = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
            s2 = (residuals ** 2).sum() / 6
            t = [(table[leader] - table[i]).mean() / math.sqrt(2 * s2 / 3) for i in others]
            raw = stats.t.sf(t, 6)
        status = race.status()
        got = [status[list(true)[i]].p_adjusted for i in others]
        assert got == pytest.approx(list(adjust_p_values(raw, "holm")), rel=1e-9)


def test_pooled_variance_with_a_missing_value_equals_yates_missing_plot_estimate():
    """One value missing from a configurations x seeds table: Yates' (1933) missing-plot value for a randomized
    block design, x = (t T + b B - G) / ((t - 1)(b - 1)) (t configurations, b seeds, T, B and G the observed totals
    of its configuration, its seed and the table), filled in, gives the least-squares residual sum of squares,
    on (t - 1)(b - 1) - 1 degrees of freedom."""
    rng = np.random.default_rng(17)
    table = rng.normal(70, 1, size=(4, 5)) + np.arange(5) * 0.3
    table[2, 3] = np.nan
    t, b = table.shape
    total_config, total_seed, total = np.nansum(table[2]), np.nansum(table[:, 3]), np.nansum(table)
    filled = table.copy()
    filled[2, 3] = (t * total_config + b * total_seed - total) / ((t - 1) * (b - 1))
    residuals = filled - filled.mean(axis=1, keepdims=True) - filled.mean(axis=0) + filled.mean()
    variance, df = pooled_variance(table)
    assert df == (t - 1) * (b - 1) - 1
    assert variance == pytest.approx((residuals ** 2).sum() / df, rel=1e-10)


def test_race_respects_the_trial_budget():
    rng = np.random.default_rng(14)
    scores = {config: {seed: 70 + rng.normal(0, 1) for seed in SEEDS} for config in "abcd"}
    race = Race(list("abcd"), SEEDS, max_trials=13, alpha=0.05)  # equal configs, none dropped at 0.05
    run_race(race, scores)
    assert race.trials_issued == 12 and race.seeds_issued == [0, 1, 2]  # 8 + 4; the next 4 would make 16
    status = race.status()
    assert sorted(s.state for s in status.values()) == [BEST, TIED, TIED, TIED]
    assert all("trial budget reached" in s.why for s in status.values())
    with pytest.raises(ValueError, match="below the first round"):
        Race(list("abcd"), SEEDS, max_trials=7)


def test_failed_trials_are_missing_seeds_and_always_failing_configs_are_dropped():
    race = Race(["a", "b", "crash"], SEEDS, initial_seeds=2)
    race.next_trials()
    for seed, (a, b) in enumerate([(70.0, 69.0), (71.0, 70.5)]):
        race.record("a", seed, a)
        race.record("b", seed, b if seed == 0 else None)  # b's seed 1 failed
        race.record("crash", seed, float("nan"))
    status = race.status()
    assert (status["b"].n, status["b"].failed, status["b"].state) == (1, 1, RACING)
    assert "not tested: 1 seed shared with a" in status["b"].why
    assert status["crash"].state == ELIMINATED and status["crash"].why == "every trial failed (2 seeds)"
    assert race.next_trials() == [("a", 2), ("b", 2)]
    with pytest.raises(ValueError, match="already recorded"):
        race.record("a", 0, 1.0)
    with pytest.raises(ValueError, match="not issued"):
        race.record("crash", 2, 1.0)
    assert race.pending() == [("a", 2), ("b", 2)]


def test_tolerance_shifts_the_null_by_the_indifference_zone():
    """With tolerance delta the test of c against the leader b is of H0: mu_b - mu_c <= -delta: scipy's one-sided
    paired t on x_b + delta vs x_c; the pooled t with mean(d) + delta in the numerator."""
    rng = np.random.default_rng(15)
    true = {"a": 75.0, "b": 74.6, "c": 74.0, "d": 73.0}
    scores = {config: {seed: mean + rng.normal(0, 0.5) for seed in SEEDS} for config, mean in true.items()}
    table = np.array([[scores[c][s] for s in SEEDS[:3]] for c in true])
    leader = int(np.argmax(table.mean(axis=1)))
    others = [i for i in range(4) if i != leader]
    for test in ("paired t", "pooled t"):
        plain, tolerant = (Race(list(true), SEEDS, initial_seeds=3, test=test, tolerance=delta) for delta in (0, 0.5))
        for race in (plain, tolerant):
            for config, seed in race.next_trials():
                race.record(config, seed, scores[config][seed])
        if test == "paired t":
            raw = [stats.ttest_rel(table[leader] + 0.5, table[i], alternative="greater").pvalue for i in others]
        else:
            residuals = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
            s2 = (residuals ** 2).sum() / 6
            raw = stats.t.sf([((table[leader] - table[i]).mean() + 0.5) / math.sqrt(2 * s2 / 3) for i in others], 6)
        got = [tolerant.status()[list(true)[i]].p_adjusted for i in others]
        assert got == pytest.approx(list(adjust_p_values(raw, "holm")), rel=1e-9)
        assert all(tolerant.status()[c].p_adjusted < plain.status()[c].p_adjusted for c in list(true) if
                   c != tolerant.best)
    with pytest.raises(ValueError, match="tolerance=-1"):
        Race(list(true), SEEDS, tolerance=-1)
