"""Line plots of a metric against a swept param: mean over seeds with a ± std band, one line per group."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sentsweep.errors import InputError


def plot_metric(runs: pd.DataFrame, x: str, metric: str, lines: list[str] | None, output: str | Path,
                log_x: bool = False, title: str | None = None) -> list[Path]:
    """Write `output` as PNG and PDF (same stem); returns both paths. Only finished runs are plotted.

    `lines` are the params whose value combination makes one line (all runs on one line when None).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = list(lines or [])
    for column in [f"params.{x}", f"metrics.{metric}"] + [f"params.{name}" for name in lines]:
        if column not in runs:
            raise InputError(f"runs have no {column.replace('.', ' ', 1)!r}")
    finished = runs[runs["status"] == "FINISHED"]
    frame = pd.DataFrame({
        "x": pd.to_numeric(finished[f"params.{x}"], errors="raise"),
        "y": finished[f"metrics.{metric}"].astype(float),
        "line": finished[[f"params.{name}" for name in lines]].astype(str).agg(" ".join, axis=1) if lines else metric,
    })
    figure, axes = plt.subplots(figsize=(6, 4))
    for name, group in frame.groupby("line", sort=True):
        stats = group.groupby("x")["y"].agg(["mean", "std", "count"]).sort_index()
        axes.plot(stats.index, stats["mean"], marker="o", label=str(name))
        std = stats["std"].fillna(0.0)
        axes.fill_between(stats.index, stats["mean"] - std, stats["mean"] + std, alpha=0.2)
    if log_x:
        axes.set_xscale("log", base=2 if x == "sample_size" else 10)
    axes.set_xlabel(x)
    axes.set_ylabel(f"{metric} (mean ± std over seeds)")
    axes.set_title(title or f"{metric} vs {x}")
    axes.grid(alpha=0.3)
    if lines:
        axes.legend(title=" ".join(lines))
    figure.tight_layout()
    stem = Path(output).with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        figure.savefig(path, dpi=150)
    plt.close(figure)
    return paths
