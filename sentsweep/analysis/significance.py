"""Significance of differences between configurations over seeds (scipy).

- Welch's t-test (unequal variances) when two configurations' seeds are independent samples;
- the paired t-test on the seeds both share, when runs of the same seed are matched (same data order,
  same initialisation of the shared parts), which removes seed-to-seed variance from the comparison;
- the paired t-test over evaluation items (queries, pairs): each item's outcome averaged over the seeds two
  configurations share, then paired item by item, which has far more power than a test over 5 seeds;
- a percentile bootstrap confidence interval of a configuration's mean over seeds.
"""

from __future__ import annotations

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
