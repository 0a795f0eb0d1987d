"""Comparison tables: cells of mean ± std over seeds, rows and columns chosen by params, the best and its group marked.

A table has one row per combination of the row params; its columns are the metrics or, with `column_param`, the
values of that param for one metric. In each column the best mean is bold and every configuration not
significantly worse than the best is marked ≈ (all pairs tested, adjusted together by `correction` at `alpha`;
over queries where `per_query` gives each run's per-query outcomes and their mean is the cell's metric). Only
finished runs enter cells (a run a race over steps stopped at a rung enters with its value there, out of the best
and its group); each cell shows its n and the step of the checkpoint its scores come from; the footnote counts
every run left out and why.

    runs = fetch_trial_runs("sqlite:///mlflow.db", "nm_weight")      # sentsweep.analysis.runs
    print(to_markdown(build_table(runs, ["method", "w"], ["sts_test_at_best_dev"])))

The test, the per-query rule, runs without a param, stopped runs and the checkpoint's step: docs/analysis.md,
"Best groups in a table"."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentsweep.analysis.runs import RACE_NOT_COUNTED_TAG, finished_cells
from sentsweep.analysis.significance import CORRECTIONS, GroupResult, best_group, bootstrap_interval
from sentsweep.errors import InputError

GROUP_MARK = "≈"  # in the best's group, not the best
LATEX_GROUP_MARK = r"$^{\approx}$"
UNTRAINED = "untrained"
STOPPED_TEST = "stopped by the race at a rung: not tested"  # to_frame's `test` of a cell a race stopped
# significance.GroupMember.test -> what the tables call it.
TEST_NAMES = {"paired t": "paired t over seeds", "paired t over items": "paired t over items"}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "none"}
# Per-query outcome of a metric (docs/analysis.md): metric suffix -> outcome suffix, same task prefix.
PER_QUERY_SUFFIXES = {"_top1": "_top1", "_map": "_ap", "_map_at_100": "_ap", "_main_score": "_main_score_items"}
ITEM_MEAN_TOLERANCE = 1e-3  # x 100 units: 100 x an MTEB mean rounded to 5 decimals is within 5e-4 of its items'
# mean; a metric averaged over subsets of unequal size is off by far more

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
    stopped: dict = field(default_factory=dict)  # seed -> the step a race stopped its run at (its values: that step's)

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
    unset: dict = field(default_factory=dict)  # row or column param -> finished runs that do not set it
    best: dict = field(default_factory=dict)  # column -> best row
    groups: dict = field(default_factory=dict)  # column -> significance.GroupResult (columns with a value)
    alpha: float = 0.05
    correction: str = "holm"
    item_tested: dict = field(default_factory=dict)  # column -> per-query outcome its pairs were tested over
    per_query_notes: dict = field(default_factory=dict)  # column -> why its per-query outcomes were not used

    def in_best_group(self, row, column) -> bool:
        """Whether the cell is in its column's best group (the best included); False for an empty cell."""
        group = self.groups.get(column)
        return group is not None and row in group.members and group.members[row].in_best_group


def per_query_name(metric: str) -> str | None:
    """The per-query outcome whose mean (x 100) is `metric`, by the rule of docs/analysis.md: "squad_top1"
    -> "squad_top1", "askubuntu_map" -> "askubuntu_ap", "cqadupstack_map_at_100" -> "cqadupstack_ap"; None for
    a metric without one (STS correlations, nDCG, ...)."""
    for suffix, outcome in PER_QUERY_SUFFIXES.items():
        if metric.endswith(suffix) and len(metric) > len(suffix):
            return metric[: -len(suffix)] + outcome
    return None


def check_significance(alpha: float, correction: str) -> None:
    """An InputError unless 0 < alpha < 1 and `correction` is one of significance.CORRECTIONS."""
    if isinstance(alpha, bool) or not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")


def column_group(cells: dict, alpha: float = 0.05, correction: str = "holm", higher_is_better: bool = True,
                 per_query: dict | None = None) -> GroupResult | None:
    """The best group of one column: significance.best_group of its {row: Cell} in the given order, the cells
    without any value left out; None when no cell has one. `per_query` is {row: {seed: [outcome per query]}}."""
    scored = {row: cell.by_seed for row, cell in cells.items() if cell.n}
    return best_group(scored, alpha, correction, higher_is_better, per_query) if scored else None


def as_number_if_possible(values: pd.Series) -> pd.Series:
    converted = pd.to_numeric(values, errors="coerce")
    return converted if converted.notna().all() else values


UNSET_ROW = "–"  # a row param a run does not set


def unset_column(param: str) -> str:
    """The column of the runs that do not set the column param."""
    return f"no {param}"


def param_keys(values: pd.Series, unset: str) -> pd.Series:
    """A param's logged values as a table's keys (numbers where they all are), `unset` where a run has none."""
    present = values.notna()
    if present.all():
        return as_number_if_possible(values)
    keys = pd.Series(unset, index=values.index, dtype=object)
    keys[present] = as_number_if_possible(values[present]).astype(object)
    return keys


RACE_NOT_COUNTED = "not counted by the race"  # status_counts' reason for a finished run its race left out


def race_not_counted(runs: pd.DataFrame) -> pd.Series:
    """Which runs a race's table leaves out (tag race_not_counted: a seed run ahead for a configuration its race
    dropped on the seeds before)."""
    if RACE_NOT_COUNTED_TAG not in runs:
        return pd.Series(False, index=runs.index)
    return runs[RACE_NOT_COUNTED_TAG].notna() & (runs[RACE_NOT_COUNTED_TAG].astype(str) != "")


def runs_entering_cells(runs: pd.DataFrame) -> pd.Series:
    """Which runs enter the cells: the finished ones the race counted, and those a race stopped at a rung whose
    configuration and seed did not finish in a run of their own (docs/analysis.md)."""
    counted = ~race_not_counted(runs)
    stopped = (runs["race_stopped_at_step"].notna() if "race_stopped_at_step" in runs
               else pd.Series(False, index=runs.index)) & counted
    finished = (runs["status"] == "FINISHED") & ~stopped & counted
    done = finished_cells(runs[finished])
    replaced = pd.Series([(config, str(seed)) in done for config, seed in
                          zip(runs.get("config_hash", [None] * len(runs)), runs["seed"])], index=runs.index, dtype=bool)
    return finished | (stopped & ~replaced)


def status_counts(runs: pd.DataFrame, entered: pd.Series | None = None) -> dict:
    """Per reason, the number of runs a table leaves out (`left_out_reasons`)."""
    return left_out_reasons(runs, entered).value_counts().to_dict()


def left_out_reasons(runs: pd.DataFrame, entered: pd.Series | None = None) -> pd.Series:
    """Why a table leaves out each run not `entered` (by default, those not FINISHED and those its race did not
    count), indexed as `runs`: failed, stopped early (KILLED: by a scheduler, a race or an interrupted driver),
    unfinished, "replaced by a finished rerun" where another run of the same configuration and seed entered (an
    interrupted --extend, a failed trial an extension ran again, a run a race stopped at a rung and an extension
    trained to the end), or finished and "not counted by the race" (`race_not_counted`)."""
    uncounted = race_not_counted(runs)
    if entered is None:
        entered = (runs["status"] == "FINISHED") & ~uncounted
    left_out = runs[~entered]
    labels = left_out["status"].map({"FAILED": "failed", "KILLED": "stopped early", "FINISHED": RACE_NOT_COUNTED}
                                    ).fillna("unfinished")
    done = finished_cells(runs[entered].assign(status="FINISHED"))
    if done:
        rerun = [(config, str(seed)) in done and not skipped
                 for config, seed, skipped in zip(left_out["config_hash"], left_out["seed"], uncounted[~entered])]
        labels = labels.mask(np.array(rerun, dtype=bool), "replaced by a finished rerun")
    return labels


def _selected_steps(runs: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per run: the step of the checkpoint `metric` was measured at (nan where the run has none) and the name
    of the step metric it was read from (docs/analysis.md)."""
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
                higher_is_better: bool = True, alpha: float = 0.05, correction: str = "holm",
                per_query: dict | None = None) -> ComparisonTable:
    """The comparison table of `runs` (as `fetch_sweep_runs` returns them): a row per combination of the
    `row_params`, a column per metric (or, with `column_param`, per value of that param for one metric); see
    docs/analysis.md.

    `alpha` and `correction` ("holm", "bonferroni" or "none") set the best groups; `per_query` is
    {run_id: {outcome name: [outcome per query]}} (what runs.per_query_outcomes returns, per run), for the
    paired tests over queries; without it every column is tested over seeds. No runs, or a param or metric the
    runs do not log, is an `InputError` naming it.

    Examples:
        >>> import pandas as pd  # four runs, as `fetch_sweep_runs` returns them
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.pooling": ["cls", "cls", "mean", "mean"],
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> table = sentsweep.build_table(runs, ["pooling"], ["sts_test_at_best_dev"])
        >>> table.rows, table.columns, table.best
        ([('cls',), ('mean',)], ['sts_test_at_best_dev'], {'sts_test_at_best_dev': ('mean',)})
    """
    check_significance(alpha, correction)
    if runs.empty:
        raise InputError("no runs to tabulate")
    params = row_params + ([column_param] if column_param else [])
    missing = [p for p in params if f"params.{p}" not in runs] + [m for m in metrics if f"metrics.{m}" not in runs]
    if missing:
        raise InputError(f"runs have no param/metric named {', '.join(map(repr, missing))}")
    if column_param and len(metrics) != 1:
        raise InputError(f"with columns by {column_param!r}, give exactly one metric (got {metrics})")
    entered = runs_entering_cells(runs)
    finished = runs[entered].reset_index(drop=True)  # labels = positions in the lists below
    stopped_at = (pd.to_numeric(finished["race_stopped_at_step"], errors="coerce").tolist()
                  if "race_stopped_at_step" in finished else [np.nan] * len(finished))
    keys = pd.DataFrame({p: param_keys(finished[f"params.{p}"], unset_column(p) if p == column_param else UNSET_ROW)
                         for p in params}, index=finished.index)
    unset = {p: int(finished[f"params.{p}"].isna().sum()) for p in params if finished[f"params.{p}"].isna().any()}
    seeds = finished["seed"].tolist()
    run_ids = finished["run_id"].tolist() if "run_id" in finished else [None] * len(finished)
    # Per metric, per run: its value, its selected step and the step metric that gave it (plain lists: indexing
    # pandas per cell was most of the time of a table of thousands of cells).
    by_metric = {metric: (finished[f"metrics.{metric}"].tolist(), *(series.tolist() for series in
                                                                     _selected_steps(finished, metric)))
                 for metric in metrics}
    cells: dict = {}
    runs_of_cell: dict = {}  # (row, column) -> {seed: (run_id, value)} of its scored runs
    for row_key, group in keys.groupby(row_params, sort=False):  # ordered below (sort_key: numbers, then text)
        row = row_key if isinstance(row_key, tuple) else (row_key,)
        subsets = group.groupby(column_param, sort=False) if column_param else [(m, group) for m in metrics]
        for column, subset in subsets:
            values, steps, step_names = by_metric[metrics[0] if column_param else column]
            scored = [(seeds[i], values[i], steps[i], step_names[i], run_ids[i]) for i in subset.index
                      if not pd.isna(values[i])]
            cells[(row, column)] = Cell(
                {seed: float(value) for seed, value, *_ in scored},
                {seed: int(step) for seed, _, step, _, _ in scored if not pd.isna(step)},
                {name for _, _, step, name, _ in scored if not pd.isna(step)},
                {seeds[i]: int(stopped_at[i]) for i in subset.index
                 if not pd.isna(values[i]) and not pd.isna(stopped_at[i])},
            )
            runs_of_cell[(row, column)] = {seed: (run_id, float(value)) for seed, value, _, _, run_id in scored}
    rows = sorted({row for row, _ in cells}, key=lambda r: tuple(map(sort_key, r)))
    columns = sorted({column for _, column in cells}, key=sort_key) if column_param else list(metrics)
    table = ComparisonTable(row_params, column_param or "metric", rows, columns, cells, status_counts(runs, entered),
                            unset=unset, alpha=alpha, correction=correction)
    for column in columns:
        # (a cell a race stopped at a rung trained for less: out of the best and its group, docs/analysis.md)
        in_column = {row: cells[(row, column)] for row in rows
                     if (row, column) in cells and not cells[(row, column)].stopped}
        items = None
        if per_query is not None:
            metric = metrics[0] if column_param else column
            items = _column_outcomes(table, column, metric, {row: runs_of_cell[(row, column)] for row in in_column},
                                     per_query)
        group = column_group(in_column, alpha, correction, higher_is_better, items)
        if group is not None:
            table.groups[column] = group
            table.best[column] = group.best
    return table


def _column_outcomes(table: ComparisonTable, column, metric: str, runs_by_row: dict, per_query: dict) -> dict | None:
    """{row: {seed: [outcome per query]}} of a column when every scored run in it has the per-query outcome
    of `metric`, all of one length, averaging (x 100) to the run's value of the metric; else None, with the
    reason in `table.per_query_notes` (docs/analysis.md). Records the outcome in `table.item_tested`."""
    name = per_query_name(metric)
    if name is None:
        return None
    found = {row: {seed: (per_query.get(run_id) or {}).get(name) for seed, (run_id, _) in by_seed.items()}
             for row, by_seed in runs_by_row.items()}
    scored = [(found[row][seed], value) for row, by_seed in runs_by_row.items() for seed, (_, value) in by_seed.items()]
    if not scored:
        return None
    missing = sum(outcomes is None or len(outcomes) == 0 for outcomes, _ in scored)
    if missing:
        table.per_query_notes[column] = f"no per-query {name} for {missing} of {len(scored)} runs"
        return None
    if len({len(outcomes) for outcomes, _ in scored}) > 1:
        table.per_query_notes[column] = f"per-query {name} of different lengths (not the same task data)"
        return None
    differ = sum(not math.isclose(100.0 * float(np.mean(outcomes)), value, rel_tol=1e-9, abs_tol=ITEM_MEAN_TOLERANCE)
                 for outcomes, value in scored)
    if differ:
        table.per_query_notes[column] = f"100 x the mean of per-query {name} is not the metric in {differ} of " \
                                        f"{len(scored)} runs (a metric averaged over subsets?)"
        return None
    table.item_tested[column] = name
    return found


def sort_key(value):
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
        text = f"{bold[0]}{text}{bold[1]}"
    elif table.in_best_group(row, column):
        text += GROUP_MARK
    if cell.steps:
        text += f" ({cell.steps_text()})"
    if cell.stopped:
        text += f" (stopped at step {', '.join(map(str, sorted(set(cell.stopped.values()))))} by the race)"
    if show_n or cell.n != _typical_n(table):
        text += f" (n={cell.n})"
    return text


def _footnote(table: ComparisonTable) -> str:
    n = _typical_n(table)
    excluded = ", ".join(f"{count} {status}" for status, count in sorted(table.excluded.items())) or "none"
    steps = (" In parentheses: the training step of the checkpoint each cell's seeds selected (untrained: step 0, "
             "the model before training)." if any(cell.steps for cell in table.cells.values()) else "")
    stopped = (" Stopped by the race: the values of a configuration a race over steps dropped at an intermediate "
               "evaluation, at that step; it trained for less than the others, so it is left out of the best and its "
               "group." if any(cell.stopped for cell in table.cells.values()) else "")
    return (f"Mean ± std over seeds (n={n} unless shown). {significance_note(table)} Runs left out: {excluded}."
            f"{unset_note(table)}{steps}{stopped}")


def unset_note(table: ComparisonTable) -> str:
    """Where the runs that do not set a row or column param are (" ..." or "")."""
    parts = [f"{count} without {param} in column \"{unset_column(param)}\"" if param not in table.row_params
             else f"{count} without {param} in rows with {param} {UNSET_ROW}" for param, count in table.unset.items()]
    return f" Finished runs that do not set a param (another stage's, a method without it): {'; '.join(parts)}." \
        if parts else ""


def significance_note(table: ComparisonTable) -> str:
    """What the bold and the group mark mean: the test(s) used, the correction, alpha, the family size, and the
    cells not tested (with why per-query outcomes were not used, where they were given and were not)."""
    tested = [column for column in table.columns if column in table.groups and table.groups[column].family_size]
    text = f"Best per column in bold; {GROUP_MARK}: not significantly worse than the best"
    if not tested:
        text += f" ({untested_reason(table)}: nothing was tested, all are kept)."
    else:
        over_items = [column for column in tested if column in table.item_tested]
        seeds, items = "two-sided paired t-test over seeds", "two-sided paired t-test over queries"
        if not over_items:
            test = seeds
        elif len(over_items) == len(tested):
            test = f"{items} (each query's outcome averaged over the seeds a pair shares)"
        else:
            test = (f"{items} (each query's outcome averaged over the seeds a pair shares) in "
                    f"{', '.join(map(str, over_items))}, {seeds} in the other columns")
        sizes = [table.groups[column].family_size for column in tested]
        if len(set(sizes)) == 1:
            family = f"{sizes[0]} pair{'s' * (sizes[0] != 1)}" + (" per column" if len(tested) > 1 else "")
        else:
            family = ", ".join(f"{size} in {column}" for column, size in zip(tested, sizes)) + " pairs"
        correction = ("none, each pair of configurations tested at alpha" if table.correction == "none" else
                      f"{CORRECTION_NAMES[table.correction]}, the p-values of all pairs of configurations in a "
                      "column adjusted together")
        text += f" ({test}; correction: {correction} ({family}); alpha = {table.alpha:g})."
    untested = []
    for row in table.rows:
        with_group = [column for column in table.columns if row in getattr(table.groups.get(column), "members", {})]
        columns = [column for column in with_group if table.groups[column].members[row].test == "not tested"]
        if columns:
            untested.append(_cells_label(table, row, columns, with_group))
    if untested:
        text += (f" Not tested (fewer than 2 seeds shared with the best), so kept in the group: {'; '.join(untested)}.")
    if table.per_query_notes:
        notes = "; ".join(f"{column}: {note}" for column, note in table.per_query_notes.items())
        text += f" Tested over seeds, per-query outcomes not used: {notes}."
    return text


def untested_reason(table: ComparisonTable) -> str:
    """Why no column of `table` was tested: the cells a race stopped at a rung are kept out of the test, and fewer
    than two configurations of a column are left; or no two configurations of a column share 2 seeds."""
    left = [sum(1 for row in table.rows if (row, column) in table.cells and table.cells[(row, column)].n
                and not table.cells[(row, column)].stopped) for column in table.columns]
    if any(cell.stopped for cell in table.cells.values()) and all(count < 2 for count in left):
        return ("the configurations a race stopped at a rung are kept out of the test (they trained for less), "
                "which leaves fewer than two configurations in each column")
    return "no two configurations of a column share 2 seeds"


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
    """The table as Markdown, as a sweep prints it: mean ± std per cell to `digits` decimals, the best per column in
    bold and its group marked, then the footnote (seeds, tests, runs left out).

    Examples:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.pooling": ["cls", "cls", "mean", "mean"],
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> table = sentsweep.build_table(runs, ["pooling"], ["sts_test_at_best_dev"])
        >>> print(sentsweep.to_markdown(table))
        | pooling | sts_test_at_best_dev |
        |---|---|
        | cls | 70.30 ± 0.28 |
        | mean | **74.30 ± 0.42** |
        <BLANKLINE>
        Mean ± std over seeds (n=2 unless shown). Best per column in bold; ...
    """
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
    r"""A booktabs table (needs \usepackage{booktabs}); ± as $\pm$, best in \textbf, the rest of its group
    marked $^{\approx}$; `caption` replaces the footnote as its caption.

    Examples:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.pooling": ["cls", "cls", "mean", "mean"],
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> table = sentsweep.build_table(runs, ["pooling"], ["sts_test_at_best_dev"])
        >>> print(sentsweep.to_latex(table, caption="STS test by pooling"))
        \begin{table}[t]
        \centering
        \begin{tabular}{lc}
        \toprule
        pooling & sts\_test\_at\_best\_dev \\
        \midrule
        cls & 70.30 $\pm$ 0.28 \\
        mean & \textbf{74.30 $\pm$ 0.42} \\
        \bottomrule
        \end{tabular}
        \caption{STS test by pooling}
        \end{table}
    """
    header = [_latex_escape(p) for p in table.row_params] + [_latex_escape(str(c)) for c in table.columns]
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{" + "l" * len(table.row_params)
             + "c" * len(table.columns) + "}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    for row in table.rows:
        cells = [_cell_text(table, row, c, digits, (r"\textbf{", "}"), False) for c in table.columns]
        cells = [c.replace(" ± ", r" $\pm$ ").replace(GROUP_MARK, LATEX_GROUP_MARK) for c in cells]
        lines.append(" & ".join([_latex_escape(str(v)) for v in row] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    text = caption or " ".join(filter(None, (_footnote(table), untrained_note(table))))
    lines.append(r"\caption{" + _latex_escape(text).replace(GROUP_MARK, LATEX_GROUP_MARK) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def seed_statistics(values) -> dict:
    """What a cell says of its seeds' values: mean, std (ddof=1; nan for one), n and the 95% bootstrap interval of
    the mean (nan for fewer than 3); mean nan for none."""
    cell = Cell(dict(enumerate(values)))
    low, high = bootstrap_interval(cell.values)
    return {"mean": cell.mean if cell.n else math.nan, "std": cell.std, "n": cell.n, "ci95_low": low,
            "ci95_high": high}


def to_frame(table: ComparisonTable) -> pd.DataFrame:
    """One line per cell: row params, column, mean, std, n, 95% bootstrap CI, `best`, `in_best_group` (the best
    included), `p_vs_best` and `p_vs_best_adjusted` (two-sided, against the column's best, before and after the
    correction; empty for the best and for cells not tested), `test` ("paired t over seeds", "paired t over
    items", "not tested", "" for the best, `STOPPED_TEST` for a cell a race stopped at a rung), `correction`,
    `alpha`, `family_size` (pairs of the column adjusted together), and `selected_steps`: each seed's selected
    step in seed order, ';'-separated (0: the untrained model kept; empty for runs without training steps).

    Examples:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.pooling": ["cls", "cls", "mean", "mean"],
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> table = sentsweep.build_table(runs, ["pooling"], ["sts_test_at_best_dev"])
        >>> sentsweep.to_frame(table)[["pooling", "metric", "mean", "n", "best", "in_best_group"]]
          pooling                metric  mean  n   best  in_best_group
        0     cls  sts_test_at_best_dev  70.3  2  False          False
        1    mean  sts_test_at_best_dev  74.3  2   True           True
    """
    records = []
    for row in table.rows:
        for column in table.columns:
            cell = table.cells.get((row, column))
            if cell is None or cell.n == 0:
                continue
            group = table.groups.get(column)
            member = group.members.get(row) if group is not None else None
            records.append(
                dict(zip(table.row_params, row)) | {table.column_label: column} | seed_statistics(cell.values) | {
                    "best": table.best.get(column) == row,
                    "in_best_group": bool(member and member.in_best_group),
                    "p_vs_best": member.p_value if member else math.nan,
                    "p_vs_best_adjusted": member.p_adjusted if member else math.nan,
                    "test": TEST_NAMES.get(member.test, member.test) if member else STOPPED_TEST,
                    "correction": group.correction if group is not None else table.correction,
                    "alpha": group.alpha if group is not None else table.alpha,
                    "family_size": group.family_size if group is not None else 0,
                    "selected_steps": ";".join(str(cell.steps[seed]) for seed in cell.by_seed if seed in cell.steps),
                }
            )
    return pd.DataFrame.from_records(records)
