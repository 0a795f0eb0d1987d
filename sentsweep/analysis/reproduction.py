"""Reproduction targets: the published values of the tables a sweep re-runs, each checked against its cell.

A sweep declares the numbers of the table it re-runs in `SweepDefinition.published`, one `PublishedValue` per
cell (its params, metric, value, source, the number of runs the value averages and the paper's setting).
`check_targets` finds each target's cell among a sweep's trial runs (`sentsweep.analysis.runs.fetch_trial_runs`)
and gives a verdict: "within" the interval in which the published mean of m runs falls if the cell reproduces the
paper's setup (x̄ ± t·s·√(1/n + 1/m)), "outside", or why it cannot be checked; settings that differ from the
paper's are listed. `reproduction_markdown` renders the checks as a report's "Reproduction targets" section; a
whole sweep's result (`PublishedSweepValue`) is checked by `sweep_value_check`.

    >>> low, high = published_interval([78.1, 78.6, 78.4, 77.9, 78.5], published_runs=5)
    >>> round(low, 2), round(high, 2)
    (77.79, 78.81)

The interval's derivation, its assumptions and the verdicts: docs/analysis.md, "Reproduction targets' intervals"."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from sentsweep.settings import Source

WITHIN, OUTSIDE, NOT_RUN, TOO_FEW = "within", "outside", "not run", "n < 2 (no interval)"
NOT_EVALUATED = "metric not evaluated"
NOT_LOGGED = "metric not logged"
VERDICTS = (WITHIN, OUTSIDE, TOO_FEW, NOT_EVALUATED, NOT_LOGGED, NOT_RUN)  # in the order the counts are given
STAGE_PARAM = "stage"  # the param a multi-stage sweep's trials log their stage's name in


@dataclass(frozen=True)
class PublishedValue:
    """A published number of the table a sweep re-runs.

    `params`: the cell, {param: value} as the sweep's trials log them (axes, and the fixed settings that make it
    the paper's cell; `stage` for one stage of a multi-stage sweep). `metric`: the project's metric measuring what
    the paper reports. `source`: where the value is printed (`cited(TSDAE, "App. A, Table 6")`). `runs`: how many
    runs the value averages (None: taken as exact; see docs/analysis.md). `setting`: the paper's settings
    outside the cell that the runs' logged params are compared with (a difference: a miss is expected). `note`:
    what the report must say beside it (a value the paper gives differently elsewhere).

    Examples:
        TSDAE's deletion ratio 0.6 with mean pooling (best STS dev, the mean of 5 seeds), as a sweep's `published`
        target:

        >>> tsdae = sentsweep.Reference("TSDAE", "Kexin Wang, Nils Reimers, Iryna Gurevych", "TSDAE", 2021,
        ...                             "Findings of EMNLP 2021")
        >>> target = sentsweep.PublishedValue({"noise_ratio": 0.6, "pooling": "mean"}, "best_sts_dev", 78.84,
        ...                                   sentsweep.cited(tsdae, "App. A, Table 7"), runs=5)
        >>> target.value, str(target.source)
        (78.84, 'TSDAE App. A, Table 7')
    """

    params: Mapping[str, Any]
    metric: str
    value: float
    source: Source | str
    runs: int | None = None
    setting: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def cell_label(self) -> str:
        return ", ".join(f"{name}={value_text(value)}" for name, value in self.params.items())


@dataclass(frozen=True)
class TargetCheck:
    """One target against its cell: the cell's seeds (`by_seed`), the interval for the published value at
    `level` (nan without one), the verdict, and the runs' settings that differ from the paper's."""

    target: PublishedValue
    by_seed: dict
    low: float
    high: float
    verdict: str
    level: float
    differences: tuple[str, ...] = ()
    logged: tuple[str, ...] = ()  # "metric not logged": the metrics of its family the cell's runs log instead

    @property
    def n(self) -> int:
        return len(self.by_seed)

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.by_seed.values()))) if self.by_seed else math.nan

    @property
    def std(self) -> float:
        return float(np.std(list(self.by_seed.values()), ddof=1)) if self.n > 1 else math.nan


def published_interval(values: Sequence[float], published_runs: int | None,
                       level: float = 0.95) -> tuple[float, float]:
    """The interval in which a published mean of `published_runs` runs falls with probability `level` if it
    comes from our cell's distribution (docs/analysis.md); `values` are the cell's per-seed scores (n >= 2)."""
    from scipy import stats

    scores = np.asarray(values, dtype=float)
    n = scores.size
    if n < 2:
        raise ValueError("an interval needs at least 2 seeds")
    spread = 1 / n + (1 / published_runs if published_runs else 0.0)
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * float(scores.std(ddof=1)) * math.sqrt(spread)
    mean = float(scores.mean())
    return mean - half, mean + half


def value_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _matches(column: pd.Series, value) -> pd.Series:
    """Which logged values (MLflow params are strings) equal `value`: numbers numerically, booleans in any case."""
    if value is None:  # MLflow logs None as "None"; a run that does not set the param has none
        return column.isna() | (column.astype(str).str.lower() == "none")
    if isinstance(value, bool):
        return column.astype(str).str.lower() == value_text(value).lower()
    if isinstance(value, (int, float, np.number)):
        numbers = pd.to_numeric(column, errors="coerce")
        return numbers.notna() & np.isclose(numbers.fillna(math.inf), float(value), rtol=1e-9, atol=0.0)
    return column.astype(str) == str(value)


def _same_setting(name: str, logged, paper) -> bool:
    if name == "model":  # a hub name or a local folder: its last path component
        return PurePosixPath(str(logged).rstrip("/")).name == PurePosixPath(str(paper).rstrip("/")).name
    return bool(_matches(pd.Series([logged]), paper).iloc[0])


def _differences(cell_runs: pd.DataFrame, setting: Mapping[str, Any]) -> tuple[str, ...]:
    found = []
    for name, paper in setting.items():
        column = f"params.{name}"
        if column not in cell_runs:
            found.append(f"{name} not logged (paper: {value_text(paper)})")
            continue
        other = sorted({str(v) for v in cell_runs[column].dropna() if not _same_setting(name, v, paper)})
        if other:
            found.append(f"{name} {', '.join(other)} (paper: {value_text(paper)})")
    return tuple(found)


def check_target(runs: pd.DataFrame, target: PublishedValue, level: float = 0.95) -> TargetCheck:
    """Check `target` against its cell among `runs` (finished runs whose params equal the target's, a run a race
    stopped at a rung left out: it trained for less; one value per seed, a repeated seed's last run as in
    `sentsweep.analysis.tables.build_table`)."""
    metric = f"metrics.{target.metric}"
    selected = runs["status"] == "FINISHED" if "status" in runs else pd.Series(True, index=runs.index)
    if "race_stopped_at_step" in runs:
        selected &= runs["race_stopped_at_step"].isna()
    for name, value in target.params.items():
        column = f"params.{name}"
        if column in runs:
            selected &= _matches(runs[column], value)
        elif value is not None:  # no run sets the param
            selected &= False
    ran = runs[selected]
    cell_runs = ran[ran[metric].notna()] if metric in ran else ran.iloc[0:0]
    by_seed = ({seed: float(value) for seed, value in zip(cell_runs["seed"], cell_runs[metric])}
               if len(cell_runs) else {})
    differences = _differences(cell_runs, target.setting) if by_seed else ()
    if not by_seed:
        finished = runs[runs["status"] == "FINISHED"] if "status" in runs else runs
        logged = metrics_of_family(ran, target.metric) if len(ran) else ()
        if metric not in finished or not finished[metric].notna().any():  # a metric the sweep did not evaluate
            verdict = NOT_EVALUATED
        else:  # the cell ran without a metric other runs log, or did not run
            verdict = NOT_LOGGED if len(ran) else NOT_RUN
        return TargetCheck(target, {}, math.nan, math.nan, verdict, level, logged=logged)
    if len(by_seed) < 2:
        return TargetCheck(target, by_seed, math.nan, math.nan, TOO_FEW, level, differences)
    low, high = published_interval(list(by_seed.values()), target.runs, level)
    verdict = WITHIN if low <= target.value <= high else OUTSIDE
    return TargetCheck(target, by_seed, low, high, verdict, level, differences)


def metrics_of_family(runs: pd.DataFrame, metric: str) -> tuple[str, ...]:
    """The metrics `runs` log that share `metric`'s first word ("sts_test_at_best_dev" for "sts_test_last"), for
    the report's line on a cell that ran without its target's metric."""
    family = metric.split("_")[0] + "_"
    return tuple(sorted(column.removeprefix("metrics.") for column in runs.columns
                        if column.startswith(f"metrics.{family}") and runs[column].notna().any()
                        and column != f"metrics.{metric}"))


def targets_of_stage(targets: Sequence[PublishedValue], stage: str | None) -> list[PublishedValue]:
    """The targets a stage's runs can hold: those of no stage, and those of `stage` (all of them for None)."""
    return [t for t in targets if stage is None or t.params.get(STAGE_PARAM, stage) == stage]


def check_targets(runs: pd.DataFrame, targets: Sequence[PublishedValue], level: float = 0.95,
                  stage: str | None = None) -> list[TargetCheck]:
    """`check_target` for each target (those of `stage` only, when given: a stage's runs hold no other's)."""
    return [check_target(runs, target, level) for target in targets_of_stage(targets, stage)]


def _number(value: float, digits: int) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


UNMEASURED = (NOT_EVALUATED, NOT_LOGGED, NOT_RUN)


def reproduction_markdown(checks: Sequence[TargetCheck], digits: int = 2, every_target: bool = False,
                          heading: str = "## Reproduction targets") -> str:
    """The "Reproduction targets" section: a row per target measured (a cell that ran, with the metric), then the
    others by metric in a few lines (a sweep over part of the paper's grid, or without the paper's tasks, leaves
    most targets unmeasured), the counts, the interval's definition and the runs' settings that differ from the
    paper's. `every_target`: a row for every target, the unmeasured too (the full list of a sweep's targets)."""
    if not checks:
        return ""
    level = checks[0].level
    percent = f"{100 * level:g}%"
    lines = [heading, "",
             f"| cell | metric | n | mean ± std | {percent} interval | published | source | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    shown = [check for check in checks if every_target or check.verdict not in UNMEASURED]
    for check in shown:
        target = check.target
        mean_std = "–" if not check.n else (
            f"{check.mean:.{digits}f} ± {'n/a' if math.isnan(check.std) else f'{check.std:.{digits}f}'}")
        interval = "–" if math.isnan(check.low) else f"[{_number(check.low, digits)}, {_number(check.high, digits)}]"
        runs = f" (mean of {target.runs} runs)" if target.runs and target.runs > 1 else (
            " (one run)" if target.runs == 1 else "")
        lines.append(f"| {target.cell_label()} | {target.metric} | {check.n} | {mean_std} | {interval} | "
                     f"{target.value:.{digits}f}{runs} | {target.source} | {check.verdict} |")
    if not shown:
        lines = lines[:1]  # no cell of any target was measured: no table
    counts = {verdict: sum(check.verdict == verdict for check in checks) for verdict in VERDICTS}
    lines += ["", f"{len(checks)} published values: " + ", ".join(f"{verdict} {count}" for verdict, count
                                                                  in counts.items() if count) + "."]
    if not every_target:
        lines += unmeasured_lines(checks, digits)
    if any(not math.isnan(check.low) for check in checks):  # the interval, where a verdict rests on one
        lines += ["",
                  f"Interval: where the published value falls with probability {percent} if it comes from the cell's "
                  f"distribution, mean ± t(n−1) · std · √(1/n + 1/m), m the runs the published value averages (none "
                  f"given: the published value as exact, √(1/n)); it assumes the paper's seed spread equals ours. At "
                  f"{percent}, about {100 * (1 - level):g} targets in 100 fall outside by chance."]
    notes = [f"- {check.target.cell_label()}: {check.target.note}" for check in checks
             if check.target.note and (every_target or check.verdict not in UNMEASURED)]
    if notes:
        lines += ["", "Notes:", *dict.fromkeys(notes)]
    differences = {}
    for check in checks:
        for difference in check.differences:
            differences.setdefault(difference, []).append(check.target.cell_label())
    if differences:
        lines += ["", "Settings of the runs that differ from the paper's (a miss is expected there) or that the runs "
                  "do not log (not compared):"]
        lines += [f"- {difference} ({len(cells)} of {len(checks)} targets)" for difference, cells in
                  differences.items()]
    return "\n".join(lines)


def unmeasured_lines(checks: Sequence[TargetCheck], digits: int = 2) -> list[str]:
    """The targets not measured, by metric: those of metrics no run evaluated counted, the cells not run named."""
    lines = []
    by_metric = _by_metric(check for check in checks if check.verdict == NOT_EVALUATED)
    if by_metric:
        lines.append(f"Metrics these runs did not evaluate ({sum(map(len, by_metric.values()))} targets): "
                     + ", ".join(f"{metric} ({len(found)})" for metric, found in by_metric.items()) + ".")
    not_logged = [check for check in checks if check.verdict == NOT_LOGGED]
    if not_logged:
        lines.append("Run, but without the target's metric: " + "; ".join(
            f"{check.target.cell_label()} ({check.target.value:.{digits}f}, {check.target.source}): its runs do not "
            f"log {check.target.metric}"
            + (f" (they log {', '.join(check.logged)})" if check.logged else
               f" (nor any {check.target.metric.split('_')[0]}_* metric)")
            for check in not_logged) + ".")
    for metric, found in _by_metric(check for check in checks if check.verdict == NOT_RUN).items():
        lines.append(f"Cells not run ({metric}): " + "; ".join(
            f"{check.target.cell_label()} ({check.target.value:.{digits}f}, {check.target.source})"
            for check in found) + ".")
    return [""] + lines if lines else []


def _by_metric(checks) -> dict[str, list[TargetCheck]]:
    found: dict[str, list[TargetCheck]] = {}
    for check in checks:
        found.setdefault(check.target.metric, []).append(check)
    return found


def targets_line(checks: Sequence[TargetCheck], declared: int, task_of_metric=None) -> str:
    """One line on the targets `checks` (of a stage) out of the sweep's `declared`: how many were measured, reproduced
    (within their interval) and outside; how many need metrics the runs did not evaluate, naming them and, where
    `task_of_metric(metric)` knows the evaluation task that gives one, the option that adds it; how many are cells
    that did not run; the runs' settings that differ from the paper's."""
    counts = {verdict: sum(check.verdict == verdict for check in checks) for verdict in VERDICTS}
    measured = counts[WITHIN] + counts[OUTSIDE] + counts[TOO_FEW]
    of = f" of the sweep's {declared} are" if declared != len(checks) else " are"
    parts = [f"{len(checks)}{of} cells of this stage", f"{measured} measured" + (
        f" ({counts[WITHIN]} reproduced, {counts[OUTSIDE]} outside"
        + (f", {counts[TOO_FEW]} on one seed" if counts[TOO_FEW] else "") + ")" if measured else "")]
    missing = list(_by_metric(check for check in checks if check.verdict == NOT_EVALUATED))
    if missing:
        tasks = list(dict.fromkeys(filter(None, map(task_of_metric, missing)))) if task_of_metric else []
        parts.append(f"{counts[NOT_EVALUATED]} need metrics this run did not evaluate ({', '.join(missing)}"
                     + (f"; add them with --eval-task NAME=PATH: {', '.join(tasks)}" if tasks else "") + ")")
    if counts[NOT_LOGGED]:
        parts.append(f"{counts[NOT_LOGGED]} of cells that ran without their metric (" + ", ".join(
            _by_metric(check for check in checks if check.verdict == NOT_LOGGED)) + ")")
    if counts[NOT_RUN]:
        parts.append(f"{counts[NOT_RUN]} of cells that did not run")
    differ = sorted({difference.split(" ", 1)[0] for check in checks for difference in check.differences
                     if " not logged " not in difference})
    if differ:
        parts.append(f"the runs' {', '.join(differ)} differ from the paper's (a miss is expected)")
    return "Reproduction targets: " + "; ".join(parts) + "."


def reproduction_section(runs: pd.DataFrame, targets: Sequence[PublishedValue], level: float = 0.95,
                         stage: str | None = None, digits: int = 2) -> str:
    """The Markdown section for `targets` (of `stage` only, when given) against `runs`; "" when none."""
    return reproduction_markdown(check_targets(runs, targets, level, stage), digits)


def contains_value(values, value) -> bool:
    return bool(_matches(pd.Series(list(values), dtype=object).map(value_text), value).any()) if len(values) else False


@dataclass(frozen=True)
class PublishedSweepValue:
    """A published result of a whole sweep, not of a cell of trials: a metric its driver logs on the sweep's own
    run (a search's answer, such as the labelled-data intersection), for the sweeps run with `options`
    ({option: value}). A search gives one answer per sweep, not one score per seed, so it has no interval over
    seeds: the sweep's result is the range `[low, high]` its search could not narrow further, and the published
    value is reproduced when it lies in that range (`sweep_value_check`)."""

    metric: str
    value: float
    source: Source | str
    options: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def applies_to(self, options) -> bool:
        """Whether a sweep run with `options` (attributes, as a `SweepOptions`) re-runs this value."""
        return all(getattr(options, name, None) == value for name, value in self.options.items())


def sweep_value_check(target: PublishedSweepValue, low: float, high: float) -> tuple[str, str]:
    """(verdict, the report's line) of a sweep-level `target` against the range [low, high] the sweep found:
    "within" where the published value lies in it, else "outside"."""
    verdict = WITHIN if low <= target.value <= high else OUTSIDE
    wanted = ", ".join(f"{name}={value_text(value)}" for name, value in target.options.items())
    line = (f"{target.source}{f' ({wanted})' if wanted else ''}: {target.metric} {target.value:g} is {verdict} "
            f"[{low:g}, {high:g}]" + (f"; {target.note}" if target.note else ""))
    return verdict, line


TARGETS_ARTIFACT = "published_targets.json"  # on a sweep's MLflow run: the targets it declared when it ran


def targets_to_json(targets: Sequence[PublishedValue]) -> str:
    """The targets as JSON (the source as its text), as a sweep logs them on its MLflow run."""
    return json.dumps([{"params": dict(t.params), "metric": t.metric, "value": t.value, "source": str(t.source),
                        "runs": t.runs, "setting": dict(t.setting), "note": t.note} for t in targets], indent=1)


def targets_from_json(text: str) -> tuple[PublishedValue, ...]:
    """The targets of `targets_to_json`'s text."""
    return tuple(PublishedValue(**fields) for fields in json.loads(text))
