"""Mean ± std over seeds, grouped by chosen params, as a DataFrame, Markdown or CSV.

Only finished runs enter a cell; failed or unfinished runs are counted and reported beside the table. The
std is the sample standard deviation (ddof=1) over the seeds of a cell; n is how many seeds that cell has.
"""

from __future__ import annotations

import pandas as pd

from sentsweep.errors import InputError


def _as_number_if_possible(values: pd.Series) -> pd.Series:
    converted = pd.to_numeric(values, errors="coerce")
    return converted if converted.notna().all() else values


def aggregate(runs: pd.DataFrame, group_by: list[str], metrics: list[str]) -> tuple[pd.DataFrame, int]:
    """(table, number of runs left out because they did not finish).

    The table has one row per combination of the `group_by` params, and for each metric the columns
    `<metric>_mean`, `<metric>_std` and `<metric>_n`.
    """
    if runs.empty:
        raise InputError("no runs to tabulate")
    missing = [p for p in group_by if f"params.{p}" not in runs] + [m for m in metrics if f"metrics.{m}" not in runs]
    if missing:
        raise InputError(f"runs have no param/metric named {', '.join(map(repr, missing))}")
    finished = runs[runs["status"] == "FINISHED"]
    left_out = len(runs) - len(finished)
    frame = pd.DataFrame({p: _as_number_if_possible(finished[f"params.{p}"]) for p in group_by})
    for metric in metrics:
        frame[metric] = finished[f"metrics.{metric}"].astype(float)
    grouped = frame.groupby(group_by, sort=True)[metrics]
    table = grouped.agg(["mean", "std", "count"])
    table.columns = [f"{metric}_{'n' if stat == 'count' else stat}" for metric, stat in table.columns]
    return table.reset_index(), left_out


def to_markdown(table: pd.DataFrame, group_by: list[str], metrics: list[str], digits: int = 2) -> str:
    """A Markdown table: one column per group param, one 'mean ± std' column and one n column per metric."""
    header = group_by + [h for m in metrics for h in (m, "n")]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for _, row in table.iterrows():
        cells = [str(row[p]) for p in group_by]
        for metric in metrics:
            mean, std, n = row[f"{metric}_mean"], row[f"{metric}_std"], int(row[f"{metric}_n"])
            std_text = "n/a" if pd.isna(std) else f"{std:.{digits}f}"
            cells += [f"{mean:.{digits}f} ± {std_text}", str(n)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
