"""The compute a sweep's trials spent, per table cell (`sentsweep analyze table --compute`).

Each trial run records its compute as the metrics `system/cpu_seconds`, `system/gpu_seconds` and
`system/wall_seconds` (`sentsweep.tracking.names`), totals over its attempts (`sentsweep.trainables.compute`). A
cell's compute is the sum over all its runs, finished or not (a failed or stopped trial spent its compute too); the
total line is the sum over every run, so the cells add up to it. A run that recorded no compute (it never reported,
or was logged before compute was recorded) counts 0 and is counted in `runs without compute`.
"""

from __future__ import annotations

import pandas as pd

from sentsweep.errors import InputError
from sentsweep.tracking.names import mlflow_metric_key
from sentsweep.trainables.compute import COMPUTE_METRICS

HOURS = {"cpu_seconds": "cpu h", "gpu_seconds": "gpu h", "wall_seconds": "wall h"}
TOTAL = "total"


def compute_by_cell(runs: pd.DataFrame, group_by: list[str]) -> pd.DataFrame:
    """One row per cell (a combination of the `group_by` params' values, a missing param as '-') and a last
    `total` row: `runs`, `runs without compute`, and the compute in hours (`cpu h`, `gpu h`, `wall h`)."""
    missing = [name for name in group_by if f"params.{name}" not in runs]
    if missing or not len(runs):
        raise InputError(f"runs have no param {missing[0]!r}" if missing else "no runs to sum the compute of")
    frame = pd.DataFrame({name: runs[f"params.{name}"].fillna("-").astype(str) for name in group_by})
    recorded = pd.Series(False, index=runs.index)
    for metric in COMPUTE_METRICS:
        column = f"metrics.{mlflow_metric_key(metric)}"
        values = pd.to_numeric(runs[column], errors="coerce") if column in runs else \
            pd.Series(float("nan"), index=runs.index)
        recorded |= values.notna()
        frame[HOURS[metric]] = values.fillna(0.0) / 3600
    frame["runs"] = 1
    frame["runs without compute"] = (~recorded).astype(int)
    columns = ["runs", "runs without compute", *HOURS.values()]
    cells = frame.groupby(group_by, sort=True)[columns].sum().reset_index()
    total = pd.DataFrame([{**{name: "" for name in group_by}, **frame[columns].sum().to_dict()}])
    total[group_by[0]] = TOTAL
    return pd.concat([cells, total], ignore_index=True)


def compute_markdown(table: pd.DataFrame, digits: int = 4) -> str:
    """The compute table as Markdown, hours to `digits` decimals."""
    header = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" if column not in HOURS.values() else "---:" for column in table.columns) + "|"
    lines = [header, rule]
    for _, row in table.iterrows():
        cells = [f"{value:.{digits}f}" if column in HOURS.values() else
                 str(int(value)) if column in ("runs", "runs without compute") else str(value)
                 for column, value in row.items()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
