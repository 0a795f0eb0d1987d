"""The seeds' spread as pictures: a metric against one swept axis, and a learning curve, each averaged over seeds.

- `axis_figure`: per line (the values of the other axes), the mean over seeds at each value of the axis with a ± std
  band, and each seed's value as a point; an axis of words (pooling) is drawn at evenly spaced positions labelled by
  its values. The runs drawn are those the table counts (`sentsweep.analysis.run_accounts`: a run a race stopped at
  a rung at its value there).
- `curve_statistics` and `curve_figure`: a metric logged at every evaluation (`sts_dev`) per configuration, its
  mean over the seeds that reached each step, with a ± std band where two or more did.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from sentsweep.analysis.run_accounts import IN_TABLE, run_accounts


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def axis_figure(runs: pd.DataFrame, x: str, metric: str, lines: list[str], title: str):
    """The figure of `metric` against axis `x`, one line per combination of the `lines` axes (module docstring)."""
    plt = _pyplot()
    counted = runs[(run_accounts(runs)["place"] == IN_TABLE) & runs[f"metrics.{metric}"].notna()
                   & runs[f"params.{x}"].notna()]
    values = counted[f"params.{x}"]
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all():
        positions, ticks = numbers.astype(float), None
    else:
        ticks = sorted(values.astype(str).unique())
        positions = values.astype(str).map({tick: index for index, tick in enumerate(ticks)}).astype(float)
    frame = pd.DataFrame({"x": positions, "y": counted[f"metrics.{metric}"].astype(float),
                          "line": counted[[f"params.{name}" for name in lines]].fillna("–").astype(str).agg(
                              " ".join, axis=1) if lines else metric})
    figure, axes = plt.subplots(figsize=(8, 4), layout="constrained")
    for name, group in frame.groupby("line", sort=True):
        stats = group.groupby("x")["y"].agg(["mean", "std"]).sort_index()
        (drawn,) = axes.plot(stats.index, stats["mean"], marker="o", label=str(name))
        std = stats["std"].fillna(0.0)
        axes.fill_between(stats.index, stats["mean"] - std, stats["mean"] + std, alpha=0.2, color=drawn.get_color())
        axes.scatter(group["x"], group["y"], s=14, alpha=0.6, color=drawn.get_color(), zorder=3)
    if ticks is not None:
        axes.set_xticks(range(len(ticks)), ticks)
    axes.set_xlabel(x)
    axes.set_ylabel(f"{metric} (mean ± std over seeds; points: seeds)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if lines and axes.get_legend_handles_labels()[0]:
        figure.legend(title=" ".join(lines), loc="outside right upper", fontsize="small")
    return figure


def metric_histories(client, run_ids: list[str], metric: str) -> dict[str, list[tuple[int, float]]]:
    """{run id: [(step, value)]} of `metric` as each run logged it (MLflow's metric history)."""
    return {run_id: [(point.step, point.value) for point in client.get_metric_history(run_id, metric)]
            for run_id in run_ids}


def curve_statistics(histories: Mapping[str, list[tuple[int, float]]], runs: pd.DataFrame) -> dict:
    """{config hash: DataFrame indexed by step, with mean, std (NaN where fewer than 2 seeds reached the step) and
    n} of the runs' `histories` ({run id: [(step, value)]}) over each configuration's seeds in the table (a run a
    race stopped at a rung up to that step)."""
    counted = runs[run_accounts(runs)["place"] == IN_TABLE]
    curves = {}
    stops = pd.to_numeric(counted.get("race_stopped_at_step", pd.Series(np.nan, index=counted.index)),
                          errors="coerce").fillna(np.inf)
    for key, group in counted.groupby("config_hash", sort=False):
        points = pd.DataFrame([(step, value) for run_id, stop in zip(group["run_id"], stops[group.index])
                               for step, value in histories.get(run_id, []) if np.isfinite(value) and step <= stop],
                              columns=["step", "value"])
        if len(points):
            curves[key] = points.groupby("step")["value"].agg(["mean", "std", "count"]).rename(
                columns={"count": "n"}).sort_index()
    return curves


def curve_figure(curves: Mapping[str, pd.DataFrame], names: Mapping[str, str], metric: str, title: str):
    """Each configuration's learning curve of `metric`: its mean over seeds by step, with a ± std band."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(8, 4), layout="constrained")
    for key in sorted(curves, key=lambda key: names.get(key, key)):
        curve = curves[key]
        (drawn,) = axes.plot(curve.index, curve["mean"], marker=".", label=names.get(key, key))
        std = curve["std"].fillna(0.0)
        axes.fill_between(curve.index, curve["mean"] - std, curve["mean"] + std, alpha=0.15, color=drawn.get_color())
    axes.set_xlabel("step")
    axes.set_ylabel(f"{metric} (mean ± std over seeds)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        figure.legend(loc="outside right upper", fontsize="small")
    return figure
