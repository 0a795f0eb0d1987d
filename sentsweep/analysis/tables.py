"""Comparison tables: cells of mean ± std over seeds, rows and columns chosen by params, best marked.

A table has one row per combination of the row params. Its columns are either the metrics (one column
each, "method x task" when each task is a metric) or, with `column_param`, the values of that param for a
single metric ("method x w"). In each column the best mean is marked (bold); a dagger marks a best that is
not significantly better than the runner-up (see sentsweep.analysis.significance; alpha 0.05).

Only finished runs enter cells; failed, stopped-early and unfinished runs are counted and reported. A cell
shows its n (number of seeds), so a configuration with a missing seed is never silently averaged with fewer.

A cell of trained runs also shows the training step of the checkpoint its seeds' scores come from, "(step 40,
60)", or "(untrained)" when every seed kept step 0: the checkpoint selection found no trained checkpoint better
than the model before training, so the score is the untrained model's; the footnote names those cells. The
step is the one the metric itself names (`best_step` for `best_sts_dev` and `sts_test_at_best_dev`,
`best_validation_step` for `sts_test_at_best_validation_loss`, ...); for other metrics (evaluation tasks,
scored with the selected weights) the run's `select_checkpoint` rule's (`last`: the final step, `total_steps`).
Runs that did not train in the shared loop (no `total_steps` metric: lexical baselines, older runs) show none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentsweep.analysis.significance import Comparison, bootstrap_interval, compare
from sentsweep.errors import InputError

NOT_SIGNIFICANT_MARK = "†"
UNTRAINED = "untrained"

# The step metric of the checkpoint a metric was measured at, where the metric names its checkpoint.
STEP_OF_METRIC = {
    "best_sts_dev": "best_step", "sts_test_at_best_dev": "best_step",
    "best_validation_loss": "best_validation_step", "sts_test_at_best_validation_loss": "best_validation_step",
    "best_task_dev": "best_task_step", "sts_test_at_best_task_dev": "best_task_step",
    "sts_test_last": "total_steps",
}
# Other metrics (evaluation tasks, scored once with the selected weights): the run's selection rule's step.
STEP_OF_RULE = {"best_sts_dev": "best_step", "validation_loss": "best_validation_step",
                "best_task_dev": "best_task_step", "last": "total_steps"}
DEFAULT_RULE = "best_sts_dev"  # EvaluationSettings.select_checkpoint's default
# Metrics measured apart from the trained checkpoints (a teacher's scores, the untrained baseline, data counts).
NO_CHECKPOINT_PREFIXES = ("teacher_", "untrained_", "gpl_", "topic_")
# What each step metric selects by, for the footnote.
SELECTED_BY = {"best_step": "STS dev", "best_validation_step": "validation loss",
               "best_task_step": "the selection task's dev score", "total_steps": "being the last"}


@dataclass
class Cell:
    """The per-seed values of one configuration for one metric, and the step of the checkpoint each value
    comes from (`steps`, seeds of trained runs only; 0 is the untrained model) with the step metrics that
    selected them (`selected_by`)."""

    by_seed: dict
    steps: dict = field(default_factory=dict)
    selected_by: set = field(default_factory=set)

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

    def mean_std_text(self, digits: int = 2) -> str:
        """"mean ± std" as the tables print it (std "n/a" for a single seed)."""
        std = "n/a" if math.isnan(self.std) else f"{self.std:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {std}"

    @property
    def untrained_seeds(self) -> int:
        """How many seeds kept the untrained model (selected step 0)."""
        return sum(step == 0 for step in self.steps.values())

    def steps_text(self) -> str:
        """The distinct selected steps: "untrained", "step 40, 60", "untrained, step 60"; "" without steps."""
        trained = sorted({step for step in self.steps.values() if step != 0})
        parts = [UNTRAINED] if self.untrained_seeds else []
        if trained:
            parts.append("step " + ", ".join(map(str, trained)))
        return ", ".join(parts)


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


def _selected_steps(runs: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per run: the step of the checkpoint `metric` was measured at (nan where the run has none) and the name
    of the step metric it was read from (see the module docstring)."""
    names = pd.Series(None, index=runs.index, dtype=object)
    steps = pd.Series(np.nan, index=runs.index, dtype=float)
    if metric.startswith(NO_CHECKPOINT_PREFIXES) or "metrics.total_steps" not in runs:
        return steps, names
    if metric in STEP_OF_METRIC:
        names[:] = STEP_OF_METRIC[metric]
    else:
        rules = runs["params.select_checkpoint"] if "params.select_checkpoint" in runs else names
        names = rules.fillna(DEFAULT_RULE).map(STEP_OF_RULE)
    for name in names.dropna().unique():
        if f"metrics.{name}" in runs:
            chosen = names == name
            steps[chosen] = pd.to_numeric(runs.loc[chosen, f"metrics.{name}"], errors="coerce")
    trained = runs["metrics.total_steps"].notna() & steps.notna()
    return steps.where(trained), names.where(trained)


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
    steps = {metric: _selected_steps(finished, metric) for metric in metrics}
    cells: dict = {}
    for row_key, group in keys.groupby(row_params, sort=True):
        row = row_key if isinstance(row_key, tuple) else (row_key,)
        subsets = group.groupby(column_param, sort=True) if column_param else [(m, group) for m in metrics]
        for column, subset in subsets:
            metric = metrics[0] if column_param else column
            values = finished.loc[subset.index, f"metrics.{metric}"]
            seeds = finished.loc[subset.index, "seed"]
            step_values, step_names = (series.loc[subset.index] for series in steps[metric])
            scored = [(seed, value, step, name) for seed, value, step, name
                      in zip(seeds, values, step_values, step_names) if not pd.isna(value)]
            cells[(row, column)] = Cell(
                {seed: float(value) for seed, value, _, _ in scored},
                {seed: int(step) for seed, _, step, _ in scored if not pd.isna(step)},
                {name for _, _, step, name in scored if not pd.isna(step)},
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
    text = cell.mean_std_text(digits)
    if table.best.get(column) == row:
        text = f"{bold[0]}{text}{bold[1]}" + ("" if table.significant(column) else NOT_SIGNIFICANT_MARK)
    if cell.steps:
        text += f" ({cell.steps_text()})"
    if show_n or cell.n != _typical_n(table):
        text += f" (n={cell.n})"
    return text


def _footnote(table: ComparisonTable) -> str:
    n = _typical_n(table)
    excluded = ", ".join(f"{count} {status}" for status, count in sorted(table.excluded.items())) or "none"
    tests = {test.test for test in table.runner_up_test.values()}
    steps = (" In parentheses: the training step of the checkpoint each cell's seeds selected (untrained: step 0, "
             "the model before training)." if any(cell.steps for cell in table.cells.values()) else "")
    return (
        f"Mean ± std over seeds (n={n} unless shown). Best per column in bold; {NOT_SIGNIFICANT_MARK}: not "
        f"significantly better than the runner-up ({'/'.join(sorted(tests)) or 'no test'}, p >= {table.alpha}). "
        f"Runs left out: {excluded}.{steps}"
    )


def _cells_label(table: ComparisonTable, row, columns: list, row_columns: list) -> str:
    """A row's params as `name=value`, with the columns meant when they are not all of the row's."""
    label = ", ".join(f"{name}={value}" for name, value in zip(table.row_params, row))
    if columns == row_columns:
        return label
    if table.column_label == "metric":
        return f"{label} ({', '.join(map(str, columns))})"
    return f"{label} at {table.column_label}={', '.join(map(str, columns))}"


def untrained_note(table: ComparisonTable) -> str:
    """Which cells kept the untrained model (selected step 0) on every seed, and on some; "" when none did."""
    everywhere, somewhere, criteria = [], [], set()
    for row in table.rows:
        with_steps = [c for c in table.columns if (row, c) in table.cells and table.cells[(row, c)].steps]
        untrained = [c for c in with_steps if table.cells[(row, c)].untrained_seeds]
        all_seeds = [c for c in untrained if table.cells[(row, c)].untrained_seeds == len(table.cells[(row, c)].steps)]
        if all_seeds:
            everywhere.append(_cells_label(table, row, all_seeds, with_steps))
            criteria |= {name for c in all_seeds for name in table.cells[(row, c)].selected_by}
        for counts in dict.fromkeys(_seed_counts(table.cells[(row, c)]) for c in untrained if c not in all_seeds):
            same = [c for c in untrained if c not in all_seeds and _seed_counts(table.cells[(row, c)]) == counts]
            somewhere.append(f"{_cells_label(table, row, same, with_steps)} ({counts})")
    parts = []
    if everywhere:
        by = " / ".join(SELECTED_BY.get(name, name) for name in sorted(criteria))
        parts.append(f"Untrained model kept by every seed in: {'; '.join(everywhere)}. No trained checkpoint beat "
                     f"step 0 on {by} there, so those cells show the untrained model's score.")
    if somewhere:
        parts.append(f"Untrained model kept by some seeds in: {'; '.join(somewhere)}.")
    return " ".join(parts)


def _seed_counts(cell: Cell) -> str:
    return f"{cell.untrained_seeds} of {len(cell.steps)} seeds"


def to_markdown(table: ComparisonTable, digits: int = 2) -> str:
    header = table.row_params + [str(c) for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in table.rows:
        cells = [str(v) for v in row] + [_cell_text(table, row, c, digits, ("**", "**"), False) for c in table.columns]
        lines.append("| " + " | ".join(cells) + " |")
    note = untrained_note(table)
    return "\n".join(lines) + "\n\n" + _footnote(table) + (f"\n\n{note}" if note else "")


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
    text = caption or " ".join(filter(None, (_footnote(table), untrained_note(table))))
    lines.append(r"\caption{" + _latex_escape(text).replace(NOT_SIGNIFICANT_MARK, r"$^\dagger$") + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def to_frame(table: ComparisonTable) -> pd.DataFrame:
    """One line per cell: row params, column, mean, std, n, 95% bootstrap CI, best, p vs runner-up, and
    `selected_steps`: each seed's selected step in seed order, ';'-separated (0: the untrained model kept;
    empty for runs without training steps)."""
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
                    "selected_steps": ";".join(str(cell.steps[seed]) for seed in cell.by_seed if seed in cell.steps),
                }
            )
    return pd.DataFrame.from_records(records)
