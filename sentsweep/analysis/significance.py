"""Significance of differences between configurations over seeds (scipy).

- Welch's t-test (unequal variances) when two configurations' seeds are independent samples;
- the paired t-test on the seeds both share, when runs of the same seed are matched (same data order,
  same initialisation of the shared parts), which removes seed-to-seed variance from the comparison;
- the paired t-test over evaluation items (queries, pairs): each item's outcome averaged over the seeds two
  configurations share, then paired item by item, which has far more power than a test over 5 seeds;
- a percentile bootstrap confidence interval of a configuration's mean over seeds;
- p-values adjusted for multiple comparisons (Holm, Bonferroni: adjust_p_values) and the group of
  configurations not significantly worse than the best, every pair tested and adjusted together (best_group).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Comparison:
    test: str  # "paired t" or "Welch t"
    statistic: float
    p_value: float
    n: int  # seeds compared (pairs for the paired test)


def welch_t_test(first: np.ndarray, second: np.ndarray) -> Comparison:
    """Two-sided Welch's t-test of mean(first) != mean(second)."""
    result = stats.ttest_ind(first, second, equal_var=False)
    return Comparison("Welch t", float(result.statistic), float(result.pvalue), min(len(first), len(second)))


def paired_t_test(first: dict, second: dict) -> Comparison:
    """Two-sided paired t-test over the seeds present in both {seed: value} maps."""
    shared = sorted(set(first) & set(second))
    a = np.array([first[s] for s in shared])
    b = np.array([second[s] for s in shared])
    result = stats.ttest_rel(a, b)
    return Comparison("paired t", float(result.statistic), float(result.pvalue), len(shared))


def paired_items_test(first: list[list[float]], second: list[list[float]]) -> Comparison:
    """Two-sided paired t-test over items: `first[s][i]` is item i's outcome in shared seed s's run."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"per-query outcomes differ in shape: {a.shape} vs {b.shape} (not the same task data?)")
    result = stats.ttest_rel(a.mean(axis=0), b.mean(axis=0))
    return Comparison("paired t over items", float(result.statistic), float(result.pvalue), a.shape[1])


def compare(first: dict, second: dict) -> Comparison:
    """The paired test where at least 2 seeds are shared, else Welch's test over all values."""
    if len(set(first) & set(second)) >= 2:
        return paired_t_test(first, second)
    return welch_t_test(np.array(list(first.values())), np.array(list(second.values())))


def bootstrap_interval(values: np.ndarray, confidence: float = 0.95, resamples: int = 2000) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; (nan, nan) for fewer than 3 values."""
    values = np.asarray(values, dtype=float)
    if len(values) < 3:
        return (float("nan"), float("nan"))
    result = stats.bootstrap(
        (values,), np.mean, confidence_level=confidence, n_resamples=resamples, method="percentile",
        random_state=np.random.default_rng(0),
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


# --- Multiple comparisons and the group of configurations not significantly worse than the best -------------

CORRECTIONS = ("holm", "bonferroni", "none")
P_LABELS = {"holm": "Holm-adjusted p", "bonferroni": "Bonferroni-adjusted p", "none": "uncorrected p"}
MIN_SHARED_SEEDS = 2  # a paired test needs at least 2 pairs


def adjust_p_values(p_values, method: str = "holm") -> np.ndarray:
    """p-values adjusted for a family of m tests, so that rejecting where adjusted p < alpha controls the
    family-wise error rate (the chance of any false rejection) at alpha.

    - "bonferroni": p~_i = min(1, m p_i).
    - "holm" (Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal
      of Statistics 6(2):65-70): with the p-values sorted, p_(1) <= ... <= p_(m),
      p~_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)); the running maximum keeps the adjusted values in the
      order of the raw ones (monotone), and rejecting where p~ < alpha is Holm's step-down procedure. It
      controls the family-wise error rate under any dependence between the tests, like Bonferroni, and
      rejects at least as much.
    - "none": the p-values unchanged.

    NaN entries (tests that could not be computed) stay NaN and are not counted in m. The result has the
    input's order.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}: expected one of {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=float).reshape(-1)
    adjusted = p.copy()
    tested = np.flatnonzero(~np.isnan(p))
    m = len(tested)
    if method == "none" or m == 0:
        return adjusted
    if method == "bonferroni":
        adjusted[tested] = np.minimum(1.0, m * p[tested])
        return adjusted
    order = tested[np.argsort(p[tested], kind="stable")]
    stepped = (m - np.arange(m)) * p[order]  # (m - j + 1) p_(j), j = 1..m
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return adjusted


@dataclass(frozen=True)
class GroupMember:
    """One configuration's place relative to the best (see best_group)."""

    mean: float  # over its own seeds
    n: int  # seeds with a value
    shared_seeds: int  # with the best
    in_best_group: bool
    p_value: float  # two-sided, against the best; nan for the best itself and for configs not tested
    p_adjusted: float  # the same after the correction over all pairs
    test: str  # "paired t", "paired t over items", "" for the best, "not tested"
    note: str  # why it is in or out of the group, in words


@dataclass(frozen=True)
class GroupResult:
    best: object  # the configuration with the best mean
    members: dict  # configuration -> GroupMember, in the input's order
    correction: str  # "holm", "bonferroni" or "none"
    alpha: float
    family_size: int  # pairs tested, all of whom were adjusted together
    higher_is_better: bool = True

    @property
    def group(self) -> list:
        """The configurations not significantly worse than the best, the best included."""
        return [config for config, member in self.members.items() if member.in_best_group]

    @property
    def untested(self) -> list:
        """Configurations left in the group because they share fewer than 2 seeds with the best."""
        return [config for config, member in self.members.items() if member.test == "not tested"]


def _seed_values(values) -> dict:
    """{seed: value} without missing values (None, NaN: failed runs); a Cell's `by_seed` is taken as is."""
    values = getattr(values, "by_seed", values)
    return {seed: float(v) for seed, v in values.items() if v is not None and not np.isnan(float(v))}


def _uses_items(shared: list, first_items: dict | None, second_items: dict | None) -> bool:
    return first_items is not None and second_items is not None and all(
        seed in first_items and seed in second_items for seed in shared)


def paired_t_tests(differences: list[list[float]]) -> list[Comparison]:
    """Two-sided paired t-tests, one `Comparison` per list of differences (each of at least 2: the paired values'
    differences, first minus second), in their order: the same numbers as scipy.stats.ttest_rel, computed together
    (a table of 27 configurations has 351 pairs). Every difference 0 gives p = 1 (no evidence of a difference); a
    constant non-zero difference gives t = +-inf and p = 0, as in scipy.

        paired_t_tests([[1.0, 2.0, 1.5], [0.0, 0.0]])
        # [Comparison("paired t", statistic=5.196..., p_value=0.0351..., n=3), Comparison("paired t", 0.0, 1.0, 2)]
    """
    means = np.array([sum(d) / len(d) for d in differences])
    spreads = np.array([math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1)) for d, m in zip(differences, means)])
    counts = np.array([len(d) for d in differences], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(spreads > 0, means / (spreads / np.sqrt(counts)), np.sign(means) * np.inf)
    t = np.where(np.isnan(t), 0.0, t)
    p = np.minimum(1.0, 2 * stats.t.sf(np.abs(t), counts - 1))
    return [Comparison("paired t", float(ti), float(pi), int(n)) for ti, pi, n in zip(t, p, counts)]


def _pair_tests(jobs: list) -> list:
    """The two-sided paired test of each (first, second, shared seeds, first's per-query outcomes, second's)
    job: over queries x the shared seeds where both have per-query outcomes for every shared seed
    (paired_items_test), else over the shared seeds' values (the paired t-test). A test that cannot give a
    p-value (every difference 0) counts as p = 1: no evidence of a difference."""
    results: list = [None] * len(jobs)
    by_seed = [i for i, (_, _, shared, a_items, b_items) in enumerate(jobs)
               if not _uses_items(shared, a_items, b_items)]
    if by_seed:
        differences = [[jobs[i][0][s] - jobs[i][1][s] for s in jobs[i][2]] for i in by_seed]
        for i, comparison in zip(by_seed, paired_t_tests(differences)):
            results[i] = comparison
    for i, (_, _, shared, a_items, b_items) in enumerate(jobs):
        if results[i] is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # scipy's note on (nearly) identical samples
                result = paired_items_test([a_items[s] for s in shared], [b_items[s] for s in shared])
            results[i] = Comparison(result.test, 0.0, 1.0, result.n) if np.isnan(result.p_value) else result
    return results


def best_group(cells_by_config: dict, alpha: float = 0.05, correction: str = "holm", higher_is_better: bool = True,
               per_query: dict | None = None) -> GroupResult:
    """The configurations not significantly worse than the best one.

    `cells_by_config` is {config: {seed: value}} (a tables.Cell is accepted for its `by_seed`; None and NaN
    values are failed runs, left out). The best is the configuration with the best mean over its own seeds
    (the first in the input's order on a tie). Every pair of configurations sharing at least 2 seeds is
    compared with a two-sided paired test over their shared seeds: the paired t-test over the seed values, or,
    where `per_query` ({config: {seed: [outcome per query]}}) has both configurations' outcomes for every shared
    seed, the paired t-test over queries of the outcomes averaged over those seeds (paired_items_test). The
    p-values of ALL k(k-1)/2 tested pairs are adjusted together (adjust_p_values): the family does not depend
    on which configuration turned out best, so when no configuration differs from another, the chance that any
    is declared worse than the best is at most alpha (for Holm and Bonferroni), whichever is picked as best.

    A configuration is out of the best group when its adjusted p against the best is < alpha and the paired
    difference on the data tested (shared seeds or queries) favours the best; otherwise it is in. A
    configuration sharing fewer than 2 seeds with the best (or with no value at all) cannot be tested and
    stays in the group, with test "not tested" and a note saying so.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
    values = {config: _seed_values(cell) for config, cell in cells_by_config.items()}
    means = {config: float(np.mean(list(v.values()))) for config, v in values.items() if v}
    if not means:
        raise ValueError("no configuration has any value")
    sign = 1.0 if higher_is_better else -1.0
    best = max(means, key=lambda config: sign * means[config])  # max keeps the first of equal keys
    per_query = per_query or {}
    configs = list(values)
    pairs, jobs = [], []
    for i, first in enumerate(configs):
        for second in configs[i + 1:]:
            shared = sorted(set(values[first]) & set(values[second]))
            if len(shared) >= MIN_SHARED_SEEDS:
                # Each pair is tested with the best (when in it) first, so the statistic's sign reads best - other.
                a, b = (second, first) if second == best else (first, second)
                pairs.append((a, b))
                jobs.append((values[a], values[b], shared, per_query.get(a), per_query.get(b)))
    tests = _pair_tests(jobs)
    adjusted = adjust_p_values([test.p_value for test in tests], correction)
    against_best = {pair[1]: (test, p) for pair, test, p in zip(pairs, tests, adjusted) if pair[0] == best}
    label = P_LABELS[correction]
    members = {}
    for config in configs:
        shared_count = len(set(values[config]) & set(values[best]))
        mean = means.get(config, float("nan"))
        if config == best:
            members[config] = GroupMember(mean, len(values[config]), shared_count, True, float("nan"),
                                          float("nan"), "", "best mean")
            continue
        if config not in against_best:
            members[config] = GroupMember(
                mean, len(values[config]), shared_count, True, float("nan"), float("nan"), "not tested",
                f"not tested: {shared_count} seed{'s' * (shared_count != 1)} shared with the best "
                f"(a paired test needs {MIN_SHARED_SEEDS}); kept in the group")
            continue
        test, p = against_best[config]
        worse = sign * test.statistic > 0
        out = bool(p < alpha and worse)
        what = "significantly worse than" if out else "not significantly worse than"
        members[config] = GroupMember(
            mean, len(values[config]), shared_count, not out, test.p_value, float(p), test.test,
            f"{what} the best ({test.test}, {label} = {p:.3g}, {len(tests)} pairs adjusted together)")
    return GroupResult(best, members, correction, alpha, len(tests), higher_is_better)
