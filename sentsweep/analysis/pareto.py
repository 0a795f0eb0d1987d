"""The Pareto set of a sweep's configurations over several objectives, with the seeds' uncertainty.

An objective is `NAME:max` or `NAME:min` (`parse_objective`). NAME is a metric the trials logged (`best_sts_dev`,
`system/wall_seconds`), a compute total in hours (`gpu_hours`, `cpu_hours`, `wall_hours`: the trial's
`system/<x>_seconds` / 3600) or a numeric param that is an inference cost (`max_seq_length`).

A configuration is on the front unless another is significantly better on one objective and not significantly worse
on any. "Significantly" is the tables' best groups' test and correction (`sentsweep.analysis.significance`): per
objective, every pair of configurations sharing at least 2 seeds is compared with the paired t-test over their
shared seeds, the p-values of all pairs of that objective adjusted together (`correction`), a difference significant
where the adjusted p is below `alpha`. A pair sharing fewer than 2 seeds is not tested: neither can drop the other.
A value a seed does not change (a param, a deterministic cost) differs by the same amount on every seed: any non-zero
difference is significant and no difference is not (the tables' rule for a constant paired difference).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sentsweep.analysis.plots import FIXED_METADATA
from sentsweep.analysis.significance import CORRECTIONS, MIN_SHARED_SEEDS, P_LABELS, adjust_p_values, paired_t_tests
from sentsweep.analysis.tables import UNSET_ROW, param_keys, runs_entering_cells, sort_key
from sentsweep.errors import InputError

DIRECTIONS = ("max", "min")
HOURS = {"gpu_hours": "system/gpu_seconds", "cpu_hours": "system/cpu_seconds", "wall_hours": "system/wall_seconds"}
FRONT_MARK = "◆"


@dataclass(frozen=True)
class Objective:
    name: str
    maximize: bool

    @property
    def label(self) -> str:
        return f"{self.name}:{'max' if self.maximize else 'min'}"


def parse_objective(text: str) -> Objective:
    """`NAME:max` or `NAME:min` as an Objective; an InputError naming the text otherwise."""
    name, colon, direction = text.rpartition(":")
    if not colon or not name:
        raise InputError(f"--objective {text!r}: expected METRIC:max or METRIC:min")
    if direction not in DIRECTIONS:
        raise InputError(f"--objective {text!r}: the direction must be max or min, got {direction!r}")
    return Objective(name, direction == "max")


def check_objectives(texts: Sequence[str]) -> list[Objective]:
    """The parsed objectives: at least 2, no name twice (InputErrors otherwise)."""
    objectives = [parse_objective(text) for text in texts]
    if len(objectives) < 2:
        raise InputError(f"a Pareto front needs at least 2 --objective, got {len(objectives)}")
    names = [objective.name for objective in objectives]
    if len(set(names)) < len(names):
        raise InputError(f"--objective names a metric twice: {', '.join(texts)}")
    return objectives


def objective_values(runs: pd.DataFrame, objective: Objective) -> pd.Series:
    """The objective's value of each run (module docstring); an InputError for a name the runs have no values of."""
    name = objective.name
    for column, scale in ((f"metrics.{name}", 1.0), (f"metrics.system/{name}", 1.0),
                          (f"metrics.{HOURS.get(name, '')}", 1 / 3600)):
        if column in runs:
            return pd.to_numeric(runs[column], errors="coerce") * scale
    if f"params.{name}" in runs:
        values = pd.to_numeric(runs[f"params.{name}"], errors="coerce")
        if values.notna().any():
            return values
    raise InputError(f"--objective {objective.label!r}: the runs have no metric or numeric param {name!r}")


@dataclass(frozen=True)
class ParetoMember:
    """One configuration: its values over seeds per objective label, and whether it is on the front."""

    by_objective: dict  # objective label -> {seed: value}
    on_front: bool
    dominated_by: tuple | None  # a configuration significantly better on one objective and not worse on any

    def mean(self, label: str) -> float:
        values = list(self.by_objective[label].values())
        return float(np.mean(values)) if values else float("nan")

    def std(self, label: str) -> float:
        values = list(self.by_objective[label].values())
        return float(np.std(values, ddof=1)) if len(values) > 1 else float("nan")


@dataclass(frozen=True)
class ParetoResult:
    row_params: list
    objectives: list
    members: dict  # row -> ParetoMember, rows in the tables' order
    alpha: float
    correction: str
    left_out: int  # finished runs without a value of every objective

    @property
    def front(self) -> list:
        return [row for row, member in self.members.items() if member.on_front]


def _better(values: dict, objectives: Sequence[Objective], alpha: float, correction: str) -> dict:
    """{(a, b): objectives on which a is significantly better than b}, every ordered pair of rows."""
    better: dict = {}
    rows = list(values)
    for objective in objectives:
        label = objective.label
        pairs, differences = [], []
        for i, first in enumerate(rows):
            for second in rows[i + 1:]:
                shared = sorted(set(values[first][label]) & set(values[second][label]))
                if len(shared) >= MIN_SHARED_SEEDS:
                    pairs.append((first, second))
                    differences.append([values[first][label][s] - values[second][label][s] for s in shared])
        tests = paired_t_tests(differences) if differences else []
        adjusted = adjust_p_values([test.p_value for test in tests], correction)
        for (first, second), test, p in zip(pairs, tests, adjusted):
            if p < alpha and test.statistic != 0:
                first_wins = (test.statistic > 0) == objective.maximize
                winner, loser = (first, second) if first_wins else (second, first)
                better.setdefault((winner, loser), set()).add(label)
    return better


def pareto_front(runs: pd.DataFrame, row_params: Sequence[str], objectives: Sequence[Objective],
                 alpha: float = 0.05, correction: str = "holm") -> ParetoResult:
    """The configurations (rows of `row_params`, as a table's) of the runs a table counts, each with its values over
    seeds per objective, and the front (module docstring)."""
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
    missing = [p for p in row_params if f"params.{p}" not in runs]
    if missing:
        raise InputError(f"runs have no param named {', '.join(map(repr, missing))}")
    counted = runs[runs_entering_cells(runs)]
    values = pd.DataFrame({o.label: objective_values(counted, o) for o in objectives}, index=counted.index)
    scored = values.notna().all(axis=1)
    counted, values = counted[scored], values[scored]
    if counted.empty:
        raise InputError(f"no finished run has a value of every objective ({', '.join(o.label for o in objectives)})")
    keys = pd.DataFrame({p: param_keys(counted[f"params.{p}"], UNSET_ROW) for p in row_params}, index=counted.index)
    by_row: dict = {}
    for row_key, group in keys.groupby(list(row_params), sort=False):
        row = row_key if isinstance(row_key, tuple) else (row_key,)
        by_row[row] = {o.label: {str(counted.at[i, "seed"]): float(values.at[i, o.label]) for i in group.index}
                       for o in objectives}
    better = _better(by_row, objectives, alpha, correction)
    labels = {o.label for o in objectives}
    members = {}
    for row in sorted(by_row, key=lambda r: tuple(map(sort_key, r))):
        dominating = [other for other in by_row if other != row and better.get((other, row))
                      and not better.get((row, other), set()) & labels]
        members[row] = ParetoMember(by_row[row], not dominating, dominating[0] if dominating else None)
    return ParetoResult(list(row_params), list(objectives), members, alpha, correction, int((~scored).sum()))


def _cell(member: ParetoMember, label: str) -> str:
    std = member.std(label)
    return f"{member.mean(label):.4g} ± {'n/a' if np.isnan(std) else f'{std:.2g}'}"


def to_markdown(result: ParetoResult) -> str:
    """The configurations with each objective's mean ± std over seeds, those on the front marked, and the rule."""
    labels = [o.label for o in result.objectives]
    lines = ["| " + " | ".join([*result.row_params, *labels, "Pareto"]) + " |",
             "|" + "---|" * (len(result.row_params) + len(labels) + 1)]
    for row, member in result.members.items():
        n = sorted({len(member.by_objective[label]) for label in labels})
        status = (f"{FRONT_MARK} on the front" if member.on_front
                  else "dominated by " + ", ".join(map(str, member.dominated_by)))
        lines.append("| " + " | ".join([*map(str, row), *(_cell(member, label) for label in labels),
                                        status + f" (n={'/'.join(map(str, n))})"]) + " |")
    left_out = f" {result.left_out} finished runs without a value of every objective left out." if result.left_out \
        else ""
    lines += ["", f"{FRONT_MARK}: on the Pareto front of {', '.join(labels)}: no other configuration is significantly "
              "better on one objective and not significantly worse on any (paired t over the shared seeds, per "
              f"objective all pairs adjusted together, {P_LABELS[result.correction]} < {result.alpha:g}). Cells: "
              f"mean ± std over seeds.{left_out}"]
    return "\n".join(lines)


def plot_front(result: ParetoResult, output: str | Path, title: str | None = None) -> list[Path]:
    """The configurations on the first two objectives, mean ± std error bars, the front filled and labelled, the
    others hollow; a PNG (and a PDF beside it). Returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y = (o.label for o in result.objectives[:2])
    figure, axes = plt.subplots(figsize=(8, 5), layout="constrained")
    for on_front, style in ((False, {"mfc": "none", "color": "0.55"}), (True, {"color": "C0"})):
        chosen = [(row, m) for row, m in result.members.items() if m.on_front == on_front]
        if not chosen:
            continue
        axes.errorbar([m.mean(x) for _, m in chosen], [m.mean(y) for _, m in chosen],
                      xerr=[np.nan_to_num(m.std(x)) for _, m in chosen],
                      yerr=[np.nan_to_num(m.std(y)) for _, m in chosen], fmt="o", capsize=3,
                      label="on the front" if on_front else "dominated", **style)
        if on_front:
            for row, member in chosen:
                axes.annotate(" ".join(map(str, row)), (member.mean(x), member.mean(y)), textcoords="offset points",
                              xytext=(5, 5), fontsize=8)
    axes.set_xlabel(f"{x} (mean ± std over seeds)")
    axes.set_ylabel(f"{y} (mean ± std over seeds)")
    axes.set_title(title or f"Pareto front: {x} vs {y}")
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside the axes: no search for a place
    stem = Path(output).with_suffix("")
    paths = []
    for suffix in (".png", ".pdf"):
        path = stem.with_suffix(suffix)
        figure.savefig(path, dpi=150, metadata=FIXED_METADATA[suffix])
        paths.append(path)
    plt.close(figure)
    return paths
