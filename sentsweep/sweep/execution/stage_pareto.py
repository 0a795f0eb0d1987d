"""A stage's Pareto set over the sweep's objectives (`--objective`, repeated): under its table in the terminal, as
an artifact of the sweep's run beside the table (`tables/<NN>-<title>-Pareto.md`), and its plot with the seeds'
error bars in the run's plots folder.

The set and its rule are `sentsweep.analysis.pareto`'s (a configuration is on the front unless another is
significantly better on one objective and not significantly worse on any, the tables' paired test over the shared
seeds and `--correction`), over the runs the stage's table counts, its rows the table's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from sentsweep.analysis.pareto import Objective, pareto_front, plot_front, to_markdown
from sentsweep.errors import InputError
from sentsweep.tracking.sweep_run import stage_file


def stage_pareto(writer, runs: pd.DataFrame, row_params: Sequence[str], objectives: Sequence[Objective],
                 alpha: float, correction: str, folder: Path, number: int, title: str,
                 plots_folder: str) -> str:
    """The stage's Pareto table (its text, to print), logged with its plot (module docstring); where no run has a
    value of every objective, the one line that says so."""
    try:
        result = pareto_front(runs, list(row_params), list(objectives), alpha, correction)
    except InputError as error:
        return f"Pareto set: {error}"
    markdown = to_markdown(result)
    writer.submit({"op": "text", "trial": None, "file": stage_file(number, f"{title} Pareto", "md"),
                   "content": markdown})
    folder.mkdir(parents=True, exist_ok=True)
    for path in plot_front(result, folder / f"{number:02d}-pareto.png", title=f"{title}: Pareto front"):
        writer.submit({"op": "file", "trial": None, "path": str(path), "folder": plots_folder})
    return markdown
