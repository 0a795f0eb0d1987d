"""A Markdown report of one sweep: where each of its trial runs went, its comparison table, a plot of the metric
against the swept param, the reproduction targets (where the sweep declared published values:
`sentsweep.analysis.reproduction`), its compute and the table's LaTeX.

Every trial run of the sweep is accounted for (`sentsweep.analysis.run_accounts`, the account the sweep printed and
logged): in the table (a run that does not set the swept param, such as NM's stage 1 without w, in a column of its
own and as a dashed line in the plot; a run a race over steps stopped at a rung, at that step), or counted as left
out with its reason (failed, stopped early, unfinished, replaced by a finished rerun, not counted by a race, no value
of the metric). A raced sweep's report says how the race decided each configuration, under its plot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sentsweep.analysis.compute import compute_by_cell, compute_markdown
from sentsweep.analysis.pareto import pareto_front, plot_front, to_markdown as pareto_markdown
from sentsweep.analysis.plots import plot_metric
from sentsweep.analysis.reproduction import PublishedValue, reproduction_section
from sentsweep.analysis.run_accounts import IN_TABLE, in_table_parts, left_out_counts, race_section, run_accounts
from sentsweep.analysis.tables import (
    build_table,
    to_latex,
    to_markdown,
    unset_column,
)


@dataclass(frozen=True)
class ReportRequest:
    """What a report shows: `metric` by the `rows` params and the swept `columns` param (the plot's x, one line per
    value of the `lines` params), with the best groups tested at `alpha` under `correction`, written to `output`.

    Examples:
        >>> request = sentsweep.ReportRequest("tsdae_deletion", rows=("pooling",), columns="noise_ratio",
        ...                                   metric="sts_test_at_best_dev", output="report/tsdae_deletion.md")
        >>> request.alpha, request.correction
        (0.05, 'holm')
    """

    experiment: str
    rows: tuple[str, ...]
    columns: str
    metric: str
    output: str  # the Markdown path; the plot goes beside it
    lines: tuple[str, ...] = ()
    log_x: bool = False
    alpha: float = 0.05
    correction: str = "holm"
    objectives: tuple = ()  # pareto.Objective's: with two or more, a section with the Pareto set and its plot


@dataclass(frozen=True)
class RunAccount:
    """Where each of a report's trial runs went (`sentsweep.analysis.run_accounts`): `in_table` (of them `unset`,
    without the swept param, from the stages `unset_stages`; `notes`: the runs a race stopped at a rung and those
    of configurations it dropped), or left out, `left_out` {reason: runs}; `total` = in_table + the runs left out."""

    total: int
    in_table: int
    unset: int
    unset_stages: tuple[str, ...]
    left_out: dict
    notes: tuple[str, ...] = ()

    def text(self, columns: str) -> str:
        text = f"{self.in_table} in the table"
        if self.notes:
            text += f" (of them {'; '.join(self.notes)})"
        if self.unset:
            where = f" (stage {', '.join(map(repr, self.unset_stages))})" if self.unset_stages else ""
            text += (f", {self.unset} of them without {columns}{where}: the column \"{unset_column(columns)}\" and "
                     f"dashed lines in the plot")
        return text + "; left out: " + (", ".join(f"{count} {reason}" for reason, count in self.left_out.items())
                                        or "none")


def run_account(runs: pd.DataFrame, metric: str, columns: str) -> RunAccount:
    """The `RunAccount` of `runs` for a report of `metric` by `columns` (`run_accounts`: left out are those a table
    leaves out, and the finished runs without a value of the metric)."""
    accounts = run_accounts(runs, metric)
    scored = runs[accounts["place"] == IN_TABLE]
    unset = scored[scored[f"params.{columns}"].isna()] if f"params.{columns}" in scored else scored
    stages = tuple(sorted(set(unset["params.stage"].dropna()))) if "params.stage" in unset else ()
    return RunAccount(len(runs), len(scored), len(unset), stages, left_out_counts(accounts),
                      tuple(in_table_parts(accounts)))


def pareto_section(runs: pd.DataFrame, request: ReportRequest, output: Path) -> str:
    """The report's section on the Pareto set of `request.objectives` over its rows and columns: the table with the
    front marked and its plot (written beside the report)."""
    result = pareto_front(runs, [*request.rows, request.columns], list(request.objectives), request.alpha,
                          request.correction)
    stem = output.with_name(output.stem + "_pareto")
    plot_front(result, stem, title=f"{request.experiment}: Pareto front")
    return (f"\n## Pareto front\n\n{pareto_markdown(result)}\n\n![the Pareto front]({stem.name}.png)\n\n"
            "Mean ± std over seeds on the first two objectives; filled and labelled: on the front.\n")


def write_report(runs: pd.DataFrame, request: ReportRequest, targets: Sequence[PublishedValue] = ()) -> Path:
    """Write request.output (Markdown) and its plot (PNG, PDF) beside it, with the reproduction `targets` the sweep
    declared checked against its cells; returns the Markdown path.

    Examples:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.noise_ratio": ["0.3", "0.3", "0.6", "0.6"], "params.pooling": "mean",
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> request = sentsweep.ReportRequest("tsdae_deletion", rows=("pooling",), columns="noise_ratio",
        ...                                   metric="sts_test_at_best_dev", output="report/tsdae_deletion.md")
        >>> path = sentsweep.write_report(runs, request)
        >>> print(path.read_text().splitlines()[0])
        # tsdae_deletion: sts_test_at_best_dev by pooling and noise_ratio
        >>> sorted(file.name for file in path.parent.iterdir())
        ['tsdae_deletion.md', 'tsdae_deletion_plot.pdf', 'tsdae_deletion_plot.png']
    """
    output = Path(request.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    table = build_table(runs, list(request.rows), [request.metric], column_param=request.columns, alpha=request.alpha,
                        correction=request.correction)
    reproduction = reproduction_section(runs, targets, level=1 - request.alpha)  # at the tests' level 1 - alpha
    reproduction = f"\n{reproduction}\n" if reproduction else ""
    plot_stem = output.with_name(output.stem + "_plot")
    plot_metric(runs, request.columns, request.metric, list(request.lines) or None, plot_stem, request.log_x,
                title=f"{request.experiment}: {request.metric} vs {request.columns}")
    lines = " x ".join(request.lines) if request.lines else "metric"
    front = pareto_section(runs, request, output) if request.objectives else ""
    race = race_section(runs)
    race = f"\n## Race\n\n{race}\n" if race else ""
    text = f"""# {request.experiment}: {request.metric} by {", ".join(request.rows)} and {request.columns}

Generated by `sentsweep analyze report` from {runs["run_id"].size} trial runs in MLflow (experiment \
`{request.experiment}`): {run_account(runs, request.metric, request.columns).text(request.columns)}.

{to_markdown(table)}

![{request.metric} vs {request.columns}]({plot_stem.name}.png)

Mean over seeds with a ± std band; one line per {lines}.
{race}{reproduction}{front}
## Compute

The compute the sweep's trials spent, in hours, per cell and in total (every run, finished or not; GPU hours are
device hours times the GPU fraction each trial held):

{compute_markdown(compute_by_cell(runs, [*request.rows, request.columns]))}

## LaTeX

```latex
{to_latex(table)}
```
"""
    output.write_text(text, encoding="utf-8")
    return output
