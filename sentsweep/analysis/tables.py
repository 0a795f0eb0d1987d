"""Comparison tables: cells of mean ± std over seeds, rows and columns chosen by params, best marked.

A table has one row per combination of the row params. Its columns are either the metrics (one column
each, "method x task" when each task is a metric) or, with `column_param`, the values of that param for a
single metric ("method x w"). In each column the best mean is marked (bold); a dagger marks a best that is
not significantly better than the runner-up (see sentsweep.analysis.significance; alpha 0.05).

Only finished runs enter cells; failed, stopped-early and unfinished runs are counted and reported. A cell
shows its n (number of seeds), so a configuration with a missing seed is never silently averaged with fewer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentsweep.analysis.significance import Comparison, bootstrap_interval, compare
from sentsweep.errors import InputError

NOT_SIGNIFICANT_MARK = "†"


@dataclass
class Cell:
    """The per-seed values of one configuration for one metric."""

    by_seed: dict

    @property
    def values(self) -> np.ndarray:
        return np.array(list(self.by_seed.values()), dtype=float)

    @property
    def n(self) -> int:
        return len(self.by_seed)

    @property
    def mean(self) -> float:
        return float(self.values.mean())

    @property
    def std(self) -> float:
        """Sample standard deviation (ddof=1); nan for a single seed."""
        return float(self.values.std(ddof=1)) if self.n > 1 else float("nan")


@dataclass
class ComparisonTable:
    row_params: list[str]
    column_label: str  # the column param, or "metric"
    rows: list[tuple]
    columns: list
    cells: dict  # (row, column) -> Cell
    excluded: dict  # run status -> count of runs left out
    best: dict = field(default_factory=dict)  # column -> best row
    runner_up_test: dict = field(default_factory=dict)  # column -> Comparison of best vs runner-up
    alpha: float = 0.05

    def significant(self, column) -> bool:
        test = self.runner_up_test.get(column)
        return test is None or (not math.isnan(test.p_value) and test.p_value < self.alpha)


def _as_number_if_possible(values: pd.Series) -> pd.Series:
    converted = pd.to_numeric(values, errors="coerce")
    return converted if converted.notna().all() else values


def _status_counts(runs: pd.DataFrame) -> dict:
    left_out = runs[runs["status"] != "FINISHED"]
    labels = left_out["status"].map({"FAILED": "failed", "KILLED": "stopped early"}).fillna("unfinished")
    return labels.value_counts().to_dict()


def build_table(runs: pd.DataFrame, row_params: list[str], metrics: list[str], column_param: str | None = None,
                higher_is_better: bool = True, alpha: float = 0.05) -> ComparisonTable:
    """The comparison table of `runs` (as fetched by sentsweep.analysis.runs); see the module docstring."""
    if runs.empty:
        raise InputError("no runs to tabulate")
    params = row_params + ([column_param] if column_param else [])
    missing = [p for p in params if f"params.{p}" not in runs] + [m for m in metrics if f"metrics.{m}" not in runs]
    if missing:
        raise InputError(f"runs have no param/metric named {', '.join(map(repr, missing))}")
    if column_param and len(metrics) != 1:
        raise InputError(f"with columns by {column_param!r}, give exactly one metric (got {metrics})")
    finished = runs[runs["status"] == "FINISHED"]
    keys = pd.DataFrame({p: _as_number_if_possible(finished[f"params.{p}"]) for p in params}, index=finished.index)
    cells: dict = {}
    for row_key, group in keys.groupby(row_params, sort=True):
        row = row_key if isinstance(row_key, tuple) else (row_key,)
        subsets = group.groupby(column_param, sort=True) if column_param else [(m, group) for m in metrics]
        for column, subset in subsets:
            metric = metrics[0] if column_param else column
            values = finished.loc[subset.index, f"metrics.{metric}"]
            seeds = finished.loc[subset.index, "seed"]
            cells[(row, column)] = Cell(
                {seed: float(value) for seed, value in zip(seeds, values) if not pd.isna(value)}
            )
    rows = sorted({row for row, _ in cells}, key=lambda r: tuple(map(_sort_key, r)))
    columns = sorted({column for _, column in cells}, key=_sort_key) if column_param else list(metrics)
    table = ComparisonTable(row_params, column_param or "metric", rows, columns, cells, _status_counts(runs),
                            alpha=alpha)
    for column in columns:
        ranked = sorted(
            (row for row in rows if (row, column) in cells and cells[(row, column)].n),
            key=lambda row: cells[(row, column)].mean, reverse=higher_is_better,
        )
        if ranked:
            table.best[column] = ranked[0]
        if len(ranked) > 1:
            table.runner_up_test[column] = compare(cells[(ranked[0], column)].by_seed,
                                                   cells[(ranked[1], column)].by_seed)
    return table


def _sort_key(value):
    return (0, value, "") if isinstance(value, (int, float, np.number)) else (1, 0, str(value))


def _typical_n(table: ComparisonTable) -> int:
    counts = [cell.n for cell in table.cells.values()]
    return max(set(counts), key=counts.count) if counts else 0


def _cell_text(table: ComparisonTable, row, column, digits: int, bold: tuple[str, str], show_n: bool) -> str:
    cell = table.cells.get((row, column))
    if cell is None or cell.n == 0:
        return "–"
    std = "n/a" if math.isnan(cell.std) else f"{cell.std:.{digits}f}"
    text = f"{cell.mean:.{digits}f} ± {std}"
    if table.best.get(column) == row:
        text = f"{bold[0]}{text}{bold[1]}" + ("" if table.significant(column) else NOT_SIGNIFICANT_MARK)
    if show_n or cell.n != _typical_n(table):
        text += f" (n={cell.n})"
    return text


def _footnote(table: ComparisonTable) -> str:
    n = _typical_n(table)
    excluded = ", ".join(f"{count} {status}" for status, count in sorted(table.excluded.items())) or "none"
    tests = {test.test for test in table.runner_up_test.values()}
    return (
        f"Mean ± std over seeds (n={n} unless shown). Best per column in bold; {NOT_SIGNIFICANT_MARK}: not "
        f"significantly better than the runner-up ({'/'.join(sorted(tests)) or 'no test'}, p >= {table.alpha}). "
        f"Runs left out: {excluded}."
    )


def to_markdown(table: ComparisonTable, digits: int = 2) -> str:
    header = table.row_params + [str(c) for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in table.rows:
        cells = [str(v) for v in row] + [_cell_text(table, row, c, digits, ("**", "**"), False) for c in table.columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + _footnote(table)


def _latex_escape(text: str) -> str:
    for char, escaped in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#")):
        text = text.replace(char, escaped)
    return text


def to_latex(table: ComparisonTable, digits: int = 2, caption: str | None = None) -> str:
    """A booktabs table (needs \\usepackage{booktabs}); ± as $\\pm$, best in \\textbf, dagger as $^\\dagger$."""
    header = [_latex_escape(p) for p in table.row_params] + [_latex_escape(str(c)) for c in table.columns]
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{" + "l" * len(table.row_params)
             + "c" * len(table.columns) + "}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    for row in table.rows:
        cells = [_cell_text(table, row, c, digits, (r"\textbf{", "}"), False) for c in table.columns]
        cells = [c.replace(" ± ", r" $\pm$ ").replace(NOT_SIGNIFICANT_MARK, r"$^\dagger$") for c in cells]
        lines.append(" & ".join([_latex_escape(str(v)) for v in row] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines.append(r"\caption{" + _latex_escape(caption or _footnote(table)).replace(NOT_SIGNIFICANT_MARK, r"$^\dagger$")
                 + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def to_frame(table: ComparisonTable) -> pd.DataFrame:
    """One line per cell: row params, column, mean, std, n, 95% bootstrap CI, best, p vs runner-up."""
    records = []
    for row in table.rows:
        for column in table.columns:
            cell = table.cells.get((row, column))
            if cell is None or cell.n == 0:
                continue
            low, high = bootstrap_interval(cell.values)
            test: Comparison | None = table.runner_up_test.get(column)
            is_best = table.best.get(column) == row
            records.append(
                dict(zip(table.row_params, row)) | {
                    table.column_label: column, "mean": cell.mean, "std": cell.std, "n": cell.n,
                    "ci95_low": low, "ci95_high": high, "best": is_best,
                    "p_vs_runner_up": test.p_value if (is_best and test) else float("nan"),
                    "test": test.test if (is_best and test) else "",
                }
            )
    return pd.DataFrame.from_records(records)
