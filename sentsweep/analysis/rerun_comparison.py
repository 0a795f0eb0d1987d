"""A re-run's tables against the run it re-ran: the same configurations, and whether any cell differs significantly.

Each stage's table (the sweep run's artifact `tables/NN-<title>.json`, `sentsweep.analysis.tables.to_frame`'s
lines) of the old run is matched with the new run's of the same file. Per stage: the configurations (rows) found in
both, and those in one only; per cell (configuration x metric) found in both, the trial values of each seed of the
two runs, paired by seed, compared by the project's test (`significance.compare`: paired t over seeds, Welch's
where fewer than two seeds are shared), the p-values of a stage's cells adjusted together (Holm). Cells whose seeds
give the same values in both runs differ by nothing (p = 1).
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sentsweep.analysis.runs import fetch_trial_runs, runs_of_row
from sentsweep.analysis.significance import adjust_p_values, compare


@dataclass
class StageComparison:
    """One stage's table in the old and the new run."""

    table: str
    shared: int  # configurations in both tables
    only_old: list[tuple] = field(default_factory=list)
    only_new: list[tuple] = field(default_factory=list)
    cells: int = 0  # cells (configuration x metric) compared
    largest_difference: float = 0.0  # of the cells' means
    significant: list[str] = field(default_factory=list)  # "configuration metric: old -> new (p_adj)"

    def line(self, alpha: float, correction: str) -> str:
        configurations = (f"{self.shared} configuration{'s' * (self.shared != 1)} in both" + (
            f", {len(self.only_old)} in the old run only" if self.only_old else "") + (
            f", {len(self.only_new)} in the new run only" if self.only_new else ""))
        verdict = (f"{len(self.significant)} differ significantly: " + "; ".join(self.significant)
                   if self.significant else "none differs significantly")
        name = self.table.removeprefix("tables/").removesuffix(".json")
        return (f"table {name}: {configurations}; {self.cells} cells, largest difference of means "
                f"{self.largest_difference:.2f}; {verdict} (paired t over seeds, {correction}, alpha {alpha})")


def table_frames(tracking_uri: str, run_id: str) -> dict[str, pd.DataFrame]:
    """The run's stage tables by artifact file name (`tables/NN-<title>.json`)."""
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    client = MlflowClient(tracking_uri)
    frames = {}
    for artifact in client.list_artifacts(run_id, "tables"):
        if artifact.path.endswith(".json"):
            payload = json.loads(Path(client.download_artifacts(run_id, artifact.path)).read_text(encoding="utf-8"))
            payload = json.loads(payload) if isinstance(payload, str) else payload
            frames[artifact.path] = _frame_of(payload)
    return frames


def _frame_of(payload: dict) -> pd.DataFrame:
    if "columns" in payload and "data" in payload:
        return pd.DataFrame(payload["data"], columns=payload["columns"])
    return pd.read_json(io.StringIO(json.dumps(payload)), orient="split")


def _stage_runs(runs: pd.DataFrame, table: str) -> pd.DataFrame:
    """The trial runs of the stage whose table is the artifact `table` (its title ends with the stage's name)."""
    if "params.stage" not in runs:
        return runs
    stem = table.rsplit("/", 1)[-1].removesuffix(".json")
    names = [name for name in runs["params.stage"].dropna().unique()
             if stem.endswith(re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("_"))]
    return runs[runs["params.stage"].isin(names)] if names else runs


def _seed_values(runs: pd.DataFrame, row_params: list[str], row: tuple, metric: str) -> dict:
    column = f"metrics.{metric}"
    matched = runs_of_row(runs, row_params, row)
    if column not in matched:
        return {}
    return {seed: value for seed, value in zip(matched["seed"], matched[column]) if pd.notna(value)}


def compare_stage(table: str, old: pd.DataFrame, new: pd.DataFrame, old_runs: pd.DataFrame, new_runs: pd.DataFrame,
                  alpha: float, correction: str) -> StageComparison:
    """One stage's comparison (see the module docstring)."""
    row_params = list(old.columns[:list(old.columns).index("metric")])
    rows = {kind: {tuple(line) for line in frame[row_params].itertuples(index=False)}
            for kind, frame in (("old", old), ("new", new))}
    shared = sorted(rows["old"] & rows["new"], key=str)
    result = StageComparison(table, len(shared), sorted(rows["old"] - rows["new"], key=str),
                             sorted(rows["new"] - rows["old"], key=str))
    old_runs, new_runs = _stage_runs(old_runs, table), _stage_runs(new_runs, table)
    names, p_values, means = [], [], []
    for row in shared:
        for metric in old["metric"].unique():
            first = _seed_values(old_runs, row_params, row, metric)
            second = _seed_values(new_runs, row_params, row, metric)
            if not first or not second:
                continue
            same = set(first) == set(second) and all(first[seed] == second[seed] for seed in first)
            p_value = 1.0 if same else compare(first, second).p_value
            names.append(", ".join(f"{name}={value}" for name, value in zip(row_params, row)) + f" {metric}")
            p_values.append(1.0 if np.isnan(p_value) else p_value)
            means.append((float(np.mean(list(first.values()))), float(np.mean(list(second.values())))))
    result.cells = len(names)
    if names:
        adjusted = adjust_p_values(p_values, correction)
        result.largest_difference = max(abs(a - b) for a, b in means)
        result.significant = [f"{name}: {a:.2f} -> {b:.2f} (p {p:.3g})"
                              for name, (a, b), p in zip(names, means, adjusted) if p < alpha]
    return result


def compare_sweeps(tracking_uri: str, experiment: str, old_run_id: str, new_run_id: str, alpha: float = 0.05,
                   correction: str = "holm") -> list[StageComparison]:
    """Every stage table of the old run against the new run's of the same file (a table the new run lacks has
    every configuration in the old run only)."""
    old_tables, new_tables = table_frames(tracking_uri, old_run_id), table_frames(tracking_uri, new_run_id)
    old_runs = fetch_trial_runs(tracking_uri, experiment, old_run_id)
    new_runs = fetch_trial_runs(tracking_uri, experiment, new_run_id)
    comparisons = []
    for table, old in old_tables.items():
        new = new_tables.get(table, old.iloc[0:0])
        comparisons.append(compare_stage(table, old, new, old_runs, new_runs, alpha, correction))
    return comparisons
