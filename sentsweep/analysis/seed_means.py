"""A sweep's configurations as what a search sees of them: each configuration's swept params and its values over
seeds (mean, standard error, n), from the runs a table counts.

A configuration is the runs of one `config_hash`; its runs are those that enter a table's cells (finished, counted
by its race, a rerun replacing an earlier run of the same seed: `sentsweep.analysis.tables`). Its swept params are
the params (`seed` and `stage` aside) whose value is the same in every run of a configuration and that take at
least two values over the configurations; a param a configuration does not set (NM's stage 1 has no w) is absent
from its `params`, and a setting that only some methods have, at one value (TSDAE's noise type), is not swept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentsweep.analysis.tables import as_number_if_possible, runs_entering_cells
from sentsweep.errors import InputError

NOT_SWEPT = ("seed", "stage")  # a run's seed and the label of its stage: not settings a search chooses


@dataclass(frozen=True)
class ConfigurationMeans:
    """One configuration: its `config_hash`, swept `params` (numbers where the sweep's values all are) and its
    `by_seed` values of one metric; `start_time` is its first run's start and `end_time` its last run's end (ms
    since the epoch, 0 where unknown)."""

    config_hash: str
    params: dict
    by_seed: dict = field(default_factory=dict)
    start_time: int = 0
    end_time: int = 0

    @property
    def n(self) -> int:
        return len(self.by_seed)

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.by_seed.values())))

    @property
    def standard_error(self) -> float:
        """The standard error of the mean over seeds (sample std / sqrt(n)); nan for a single seed."""
        if self.n < 2:
            return float("nan")
        return float(np.std(list(self.by_seed.values()), ddof=1) / math.sqrt(self.n))


def swept_params(runs: pd.DataFrame) -> list[str]:
    """The params (without `params.`, NOT_SWEPT aside) constant within each configuration and taking at least two
    values over the configurations, in the runs' column order."""
    names = [c[len("params."):] for c in runs.columns if c.startswith("params.") and c[7:] not in NOT_SWEPT]
    swept = []
    for name in names:
        column = runs[f"params.{name}"].astype(object).where(runs[f"params.{name}"].notna(), None)
        per_config = column.groupby(runs["config_hash"]).agg(lambda values: frozenset(values))
        values = {next(iter(v)) for v in per_config} - {None}
        if (per_config.map(len) == 1).all() and len(values) > 1:
            swept.append(name)
    return swept


def configuration_means(runs: pd.DataFrame, metric: str) -> tuple[list[ConfigurationMeans], list[str]]:
    """The configurations of `runs` (as `sentsweep.analysis.runs.fetch_sweep_runs` returns them) with a value of
    `metric`, in the order their first runs started, and the swept params. An InputError names a metric the runs
    do not have, or runs with no configuration that has a value."""
    if runs.empty or "config_hash" not in runs:
        raise InputError("no trial runs to read configurations from")
    if f"metrics.{metric}" not in runs:
        known = sorted(c[len("metrics."):] for c in runs.columns if c.startswith("metrics."))
        raise InputError(f"runs have no metric {metric!r} (they have: {', '.join(known)})")
    counted = runs[runs_entering_cells(runs)]
    counted = counted[counted[f"metrics.{metric}"].notna()]
    if counted.empty:
        raise InputError(f"no finished run has a value of {metric!r}")
    names = swept_params(counted)
    numbers = {name: as_number_if_possible(counted[f"params.{name}"].dropna()) for name in names}
    configurations = []
    for config_hash, group in counted.groupby("config_hash", sort=False):
        first = group.index[0]
        params = {name: _plain(numbers[name].get(first)) for name in names if not pd.isna(group.at[first,
                                                                                                    f"params.{name}"])}
        by_seed = {str(seed): float(value) for seed, value in zip(group["seed"], group[f"metrics.{metric}"])}
        configurations.append(ConfigurationMeans(str(config_hash), params, by_seed, _time(group, "start_time", min),
                                                 _time(group, "end_time", max)))
    configurations.sort(key=lambda configuration: configuration.start_time)
    return configurations, names


def _time(group: pd.DataFrame, column: str, pick) -> int:
    """The earliest or latest (`pick`) of a column of times of a configuration's runs; 0 where none is known."""
    known = group[column].dropna() if column in group else ()
    return int(pick(known)) if len(known) else 0


def _plain(value):
    """A param's value as a plain Python number or string (numpy scalars do not go into Optuna's JSON)."""
    return value.item() if isinstance(value, np.generic) else value
