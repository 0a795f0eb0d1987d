"""TSDAE search spaces (TSDAE paper, appendix A): deletion ratio x pooling.

The paper's grid: deletion ratio 0.1 ... 0.9 (table 6) and pooling CLS / mean / max (table 7), 5 seeds,
scored by the best STS-benchmark dev score over evaluations every 1.5K of 30K steps.
"""

from __future__ import annotations

from ray import tune

PAPER_DELETION_RATIOS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
PAPER_POOLINGS = ["cls", "mean", "max"]
PAPER_SEEDS = 5


def deletion_pooling_grid(ratios: list[float], poolings: list[str]) -> dict:
    """Exact ablation grid over deletion ratio and pooling."""
    return {"noise_ratio": list(ratios), "pooling": list(poolings)}


def deletion_pooling_ranges(low: float, high: float, poolings: list[str]) -> dict:
    """Optuna-sampled deletion ratio in [low, high] and pooling among `poolings`."""
    return {"noise_ratio": tune.uniform(low, high), "pooling": tune.choice(list(poolings))}
