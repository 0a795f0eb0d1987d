"""Reproduction targets: the published values of the tables a sweep re-runs, each checked against its cell.

A sweep declares the numbers of the table it re-runs in `SweepDefinition.published`, one `PublishedValue` per
cell: the cell's `params` (as the sweep logs them), the project's `metric` that measures what the paper reports,
the `value`, its `source` (document and table), how many runs the value averages (`runs`), and the paper's
`setting` outside the cell (model, steps...) that the runs are compared with. `check_targets` finds each
target's cell among a sweep's trial runs (the DataFrame of `sentsweep.analysis.runs.fetch_trial_runs`, not a
`ComparisonTable`: a table's rows hold only its row params, while a target also names the settings that make it
the paper's cell, such as `tie_decoder` or a greedy search's `stage`), and `reproduction_markdown` renders the
checks as the "Reproduction targets" section of a report.

The interval. A cell has n seeds with mean x̄ and sample std s (ddof 1). If the sweep reproduces the paper's
setup, its published value P is the mean of m runs from the same distribution as ours (normal, mean μ, variance
σ²): x̄ − P ~ N(0, σ²·(1/n + 1/m)), and (x̄ − P) / (s·√(1/n + 1/m)) follows Student's t with n − 1 degrees of
freedom. The interval in which P then falls with probability `level` (95%) is

    x̄ ± t_{(1+level)/2, n−1} · s · √(1/n + 1/m),

the prediction interval for the mean of m new runs. m is what the paper reports (`PublishedValue.runs`): 002's
App. A tables average 5 seeds (m = 5); a value from one run (m = 1) gives the prediction interval of one new run,
x̄ ± t·s·√(1 + 1/n); a value taken as exact (`runs=None`: the paper says nothing) gives the t-interval of our mean,
x̄ ± t·s/√n, the narrowest. The t-interval of the mean alone is the wrong test for a published mean of a few
seeds: it ignores the seed noise in the published value itself, and would call a faithful reproduction "outside"
far more often than 1 − level of the time.

Assumptions: the paper's seed-to-seed spread equals ours (its App. A tables give no std), the scores are about
normal, and the published value's rounding (to 2 decimals) is negligible. With many targets at 95%, about one in
20 falls outside by chance even when the setup reproduces the paper's.

Verdicts: "within" (P in the closed interval), "outside", "not run" (no finished run of the cell has the metric),
"n < 2 (no interval)" (a single seed: no std). Where the runs' logged settings differ from the paper's
(`PublishedValue.setting`; `model` compared by its last path component, so a local folder named
bert-base-uncased is the paper's), the section lists the differences: a miss is then expected.

A result of a whole sweep (a search's answer, logged on the sweep's own run, not a cell of trials) is a
`PublishedSweepValue`: the sweep's driver checks it against the range its search left (`sweep_value_check`).
"""

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
STAGE_PARAM = "stage"  # the param a multi-stage sweep's trials log their stage's name in


@dataclass(frozen=True)
class PublishedValue:
    """A published number of the table a sweep re-runs.

    `params`: the cell, {param: value} as the sweep's trials log them (axes, and the fixed settings that make it
    the paper's cell; `stage` for one stage of a multi-stage sweep). `metric`: the project's metric measuring what
    the paper reports. `source`: where the value is printed (`cited(TSDAE, "App. A, Table 6")`). `runs`: how many
    runs the value averages (None: taken as exact; see the module docstring). `setting`: the paper's settings
    outside the cell that the runs' logged params are compared with (a difference: a miss is expected). `note`:
    what the report must say beside it (a value the paper gives differently elsewhere).
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
    comes from our cell's distribution (module docstring); `values` are the cell's per-seed scores (n >= 2)."""
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
    if isinstance(value, bool) or value is None:  # MLflow logs None as "None"
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
        selected &= _matches(runs[column], value) if column in runs else False
    cell_runs = runs[selected]
    if metric in cell_runs:
        cell_runs = cell_runs[cell_runs[metric].notna()]
    else:
        cell_runs = cell_runs.iloc[0:0]
    by_seed = ({seed: float(value) for seed, value in zip(cell_runs["seed"], cell_runs[metric])}
               if len(cell_runs) else {})
    differences = _differences(cell_runs, target.setting) if by_seed else ()
    if not by_seed:
        return TargetCheck(target, {}, math.nan, math.nan, NOT_RUN, level)
    if len(by_seed) < 2:
        return TargetCheck(target, by_seed, math.nan, math.nan, TOO_FEW, level, differences)
    low, high = published_interval(list(by_seed.values()), target.runs, level)
    verdict = WITHIN if low <= target.value <= high else OUTSIDE
    return TargetCheck(target, by_seed, low, high, verdict, level, differences)


def targets_of_stage(targets: Sequence[PublishedValue], stage: str | None) -> list[PublishedValue]:
    """The targets a stage's runs can hold: those of no stage, and those of `stage` (all of them for None)."""
    return [t for t in targets if stage is None or t.params.get(STAGE_PARAM, stage) == stage]


def check_targets(runs: pd.DataFrame, targets: Sequence[PublishedValue], level: float = 0.95,
                  stage: str | None = None) -> list[TargetCheck]:
    """`check_target` for each target (those of `stage` only, when given: a stage's runs hold no other's)."""
    return [check_target(runs, target, level) for target in targets_of_stage(targets, stage)]


def _number(value: float, digits: int) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def reproduction_markdown(checks: Sequence[TargetCheck], digits: int = 2) -> str:
    """The "Reproduction targets" section: one line per target whose cell ran (the others named in one line: a
    sweep over part of the paper's grid leaves most targets unrun), then the counts, the interval's definition and
    the runs' settings that differ from the paper's."""
    if not checks:
        return ""
    level = checks[0].level
    percent = f"{100 * level:g}%"
    lines = ["## Reproduction targets", "",
             f"| cell | metric | n | mean ± std | {percent} interval | published | source | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for check in checks:
        if check.verdict == NOT_RUN:
            continue
        target = check.target
        mean_std = "–" if not check.n else (
            f"{check.mean:.{digits}f} ± {'n/a' if math.isnan(check.std) else f'{check.std:.{digits}f}'}")
        interval = "–" if math.isnan(check.low) else f"[{_number(check.low, digits)}, {_number(check.high, digits)}]"
        runs = f" (mean of {target.runs} runs)" if target.runs and target.runs > 1 else (
            " (one run)" if target.runs == 1 else "")
        lines.append(f"| {target.cell_label()} | {target.metric} | {check.n} | {mean_std} | {interval} | "
                     f"{target.value:.{digits}f}{runs} | {target.source} | {check.verdict} |")
    counts = {verdict: sum(check.verdict == verdict for check in checks)
              for verdict in (WITHIN, OUTSIDE, NOT_RUN, TOO_FEW)}
    not_run = [check.target for check in checks if check.verdict == NOT_RUN]
    if len(not_run) == len(checks):
        lines = lines[:2]  # no cell of any target ran: no table
    lines += ["", f"{len(checks)} published values: " + ", ".join(f"{verdict} {count}" for verdict, count
                                                                  in counts.items() if count) + "."]
    if not_run:
        lines.append("Not run by this sweep: " + "; ".join(
            f"{target.cell_label()} ({target.value:.{digits}f}, {target.source})" for target in not_run) + ".")
    lines += ["",
              f"Interval: where the published value falls with probability {percent} if it comes from the cell's "
              f"distribution, mean ± t(n−1) · std · √(1/n + 1/m), m the runs the published value averages (none "
              f"given: the published value as exact, √(1/n)); it assumes the paper's seed spread equals ours. At "
              f"{percent}, about {100 * (1 - level):g} targets in 100 fall outside by chance."]
    notes = [f"- {check.target.cell_label()}: {check.target.note}" for check in checks
             if check.target.note and check.verdict != NOT_RUN]
    if notes:
        lines += ["", "Notes:", *notes]
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
