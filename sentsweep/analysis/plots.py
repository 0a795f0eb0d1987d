"""Line plots of a metric against a swept param: mean over seeds with a ± std band, one line per group.

The runs plotted are those a table counts: finished, with a value of the metric, not left out by a race. A group whose
runs do not set the x param (a stage or a method without it, as NM's stage 1 has no w) has no x to be plotted at:
it is drawn as a dashed horizontal line at its mean, a baseline across the plot, labelled "(no <x>)". The legend
lists only lines with data, outside the axes, to the right, so that it never covers a line or a band.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sentsweep.analysis.tables import race_not_counted
from sentsweep.errors import InputError

# The files' metadata without the time they were written, so that the same runs give the same PDF (docs/).
FIXED_METADATA = {".png": {}, ".pdf": {"CreationDate": None, "ModDate": None}}


def plotted_frame(runs: pd.DataFrame, x: str, metric: str, lines: list[str]) -> pd.DataFrame:
    """One row per plotted run: `x` (nan where the run does not set it), `y`, and its `line`'s label."""
    for column in [f"params.{x}", f"metrics.{metric}"] + [f"params.{name}" for name in lines]:
        if column not in runs:
            raise InputError(f"runs have no {column.replace('.', ' ', 1)!r}")
    counted = runs[(runs["status"] == "FINISHED") & ~race_not_counted(runs)]
    counted = counted[counted[f"metrics.{metric}"].notna()]
    has_x = counted[f"params.{x}"].notna()
    frame = pd.DataFrame({
        "x": float("nan"),
        "y": counted[f"metrics.{metric}"].astype(float),
        "line": (counted[[f"params.{name}" for name in lines]].fillna("–").astype(str).agg(" ".join, axis=1)
                 if lines else metric),
    }, index=counted.index)
    frame.loc[has_x, "x"] = pd.to_numeric(counted.loc[has_x, f"params.{x}"], errors="raise")
    return frame


def metric_figure(runs: pd.DataFrame, x: str, metric: str, lines: list[str] | None, log_x: bool = False,
                  title: str | None = None):
    """The figure of `plot_metric` (matplotlib's, for tests to read)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = list(lines or [])
    frame = plotted_frame(runs, x, metric, lines)
    figure, axes = plt.subplots(figsize=(8, 4), layout="constrained")
    on_x = frame[frame["x"].notna()]
    for name, group in on_x.groupby("line", sort=True):
        stats = group.groupby("x")["y"].agg(["mean", "std"]).sort_index()
        axes.plot(stats.index, stats["mean"], marker="o", label=str(name))
        std = stats["std"].fillna(0.0)
        axes.fill_between(stats.index, stats["mean"] - std, stats["mean"] + std, alpha=0.2)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = on_x["line"].nunique()
    for index, (name, group) in enumerate(frame[frame["x"].isna()].groupby("line", sort=True)):
        axes.axhline(group["y"].mean(), linestyle="--", linewidth=1.2, label=f"{name} (no {x})",
                     color=colors[(drawn + index) % len(colors)])
    if log_x and len(on_x):
        axes.set_xscale("log", base=2 if x == "sample_size" else 10)
    axes.set_xlabel(x)
    axes.set_ylabel(f"{metric} (mean ± std over seeds)")
    axes.set_title(title or f"{metric} vs {x}")
    axes.grid(alpha=0.3)
    if lines and axes.get_legend_handles_labels()[0]:
        figure.legend(title=" ".join(lines), loc="outside right upper", fontsize="small")
    return figure


def plot_metric(runs: pd.DataFrame, x: str, metric: str, lines: list[str] | None, output: str | Path,
                log_x: bool = False, title: str | None = None) -> list[Path]:
    """Write `output` as PNG and PDF (same stem); returns both paths (see the module docstring for what is drawn).

    `lines` are the params whose value combination makes one line (all runs on one line when None).

    Examples:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "status": "FINISHED", "seed": ["0", "1", "0", "1"],
        ...                      "params.noise_ratio": ["0.3", "0.3", "0.6", "0.6"], "params.pooling": "mean",
        ...                      "metrics.sts_test_at_best_dev": [70.1, 70.5, 74.0, 74.6]})
        >>> paths = sentsweep.plot_metric(runs, x="noise_ratio", metric="sts_test_at_best_dev", lines=["pooling"],
        ...                               output="plots/noise_ratio.png")
        >>> [str(path) for path in paths]
        ['plots/noise_ratio.png', 'plots/noise_ratio.pdf']
    """
    import matplotlib.pyplot as plt

    figure = metric_figure(runs, x, metric, lines, log_x, title)
    stem = Path(output).with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        figure.savefig(path, dpi=150, metadata=FIXED_METADATA[path.suffix])
    plt.close(figure)
    return paths
