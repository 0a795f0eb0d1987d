"""A stage's seed-level pictures in MLflow, at the stage's end.

On the sweep's run, PNG artifacts under `plots/` (the run's Artifacts tab shows them): the selection metric against
each axis the stage sweeps, mean ± std over seeds and each seed as a point (`NN-<metric>-by-<axis>.png`), and the
learning curve of `CURVE_METRIC`, each configuration's mean over seeds by step with its ± std band
(`NN-<metric>-curve.png`; `sentsweep.analysis.seed_plots`). On each configuration's run, that learning curve as the
metrics `<metric>_mean` and `<metric>_n` at every step, and `<metric>_std` at the steps two or more seeds reached,
so that MLflow's own charts draw the averaged curves. The pictures are written to the output folder first, the
writer logs them from there (`sentsweep.tracking.writer`: queued with the other writes).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from sentsweep.analysis.run_accounts import configuration_names
from sentsweep.analysis.seed_plots import axis_figure, curve_figure, curve_statistics, metric_histories
from sentsweep.tracking.configurations import address
from sentsweep.tracking.names import SHOWN_DIGITS, statistic_key

PLOTS_FOLDER = "plots"
CURVE_METRIC = "sts_dev"  # the shared loop's dev score at every evaluation


def log_stage_plots(writer, runs: pd.DataFrame, axes: list[str], metric: str, folder: Path, number: int,
                    title: str) -> None:
    """The stage's plots and learning curves (module docstring): `runs` the table's runs, `axes` the stage's,
    `metric` the selection metric; the PNG files go to `folder`, named by the stage's `number` (1, 2, ...)."""
    import matplotlib.pyplot as plt

    if not len(runs):
        return
    folder.mkdir(parents=True, exist_ok=True)
    figures = []
    swept = [axis for axis in axes if f"params.{axis}" in runs and runs[f"params.{axis}"].nunique() > 1]
    for axis in swept if f"metrics.{metric}" in runs else []:
        figures.append((f"{number:02d}-{metric}-by-{axis}.png", axis_figure(
            runs, axis, metric, [other for other in swept if other != axis], f"{title}: {metric} by {axis}")))
    histories = writer.call("reading the learning curves", metric_histories, writer.client, list(runs["run_id"]),
                            CURVE_METRIC)
    curves = curve_statistics(histories, runs)
    if curves:
        figures.append((f"{number:02d}-{CURVE_METRIC}-curve.png", curve_figure(
            curves, configuration_names(runs), CURVE_METRIC, f"{title}: {CURVE_METRIC} by step")))
    for name, figure in figures:
        figure.savefig(folder / name, dpi=120)
        plt.close(figure)
        writer.submit({"op": "file", "trial": None, "path": str(folder / name), "folder": PLOTS_FOLDER})
    timestamp = int(time.time() * 1000)
    for key, curve in curves.items():
        writer.submit({"op": "metrics", "trial": address(key), "metrics": curve_metrics(curve, timestamp)})


def curve_metrics(curve: pd.DataFrame, timestamp_ms: int) -> list[tuple[str, float, int, int]]:
    """A configuration's learning curve (`curve_statistics`' frame) as MLflow metrics at its steps: the mean and n
    at each, the std where it is defined (two or more seeds)."""
    metrics = []
    for step, line in curve.iterrows():
        metrics.append((statistic_key(CURVE_METRIC, "mean"), round(float(line["mean"]), SHOWN_DIGITS), timestamp_ms,
                        int(step)))
        metrics.append((statistic_key(CURVE_METRIC, "n"), float(line["n"]), timestamp_ms, int(step)))
        if line["n"] >= 2 and pd.notna(line["std"]):
            metrics.append((statistic_key(CURVE_METRIC, "std"), round(float(line["std"]), SHOWN_DIGITS),
                            timestamp_ms, int(step)))
    return metrics
