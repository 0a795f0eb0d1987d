"""TSDAE search spaces (TSDAE paper, appendix A).

The paper's greedy search on the STS benchmark dev set, 5 seeds, best dev score over evaluations every
1.5K of 30K steps: noise type at ratio 0.3 with CLS pooling (table 5), then the deletion ratio 0.1 ... 0.9
(table 6), then pooling CLS / mean / max (table 7), then tying the encoder and decoder.
"""

from __future__ import annotations

from ray import tune

PAPER_NOISE_TYPES = ["delete", "swap", "mask", "replace", "insert"]
PAPER_DELETION_RATIOS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
PAPER_POOLINGS = ["cls", "mean", "max"]
PAPER_SEEDS = 5
# Appendix A: 30K steps, evaluation every 1.5K; appendix B: batch size 8, AdamW at a constant 3e-5.
PAPER_SETTINGS = dict(
    method="tsdae", noise_type="delete", noise_ratio=0.6, pooling="cls", tie_decoder=True, lr=3e-5, batch_size=8,
    max_steps=30_000, eval_steps=1_500, max_seq_length=128, seeds=PAPER_SEEDS,
)
QUICK_SETTINGS = dict(lr=1e-3, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)


def deletion_pooling_grid(ratios: list[float], poolings: list[str]) -> dict:
    """Exact ablation grid over deletion ratio and pooling."""
    return {"noise_ratio": list(ratios), "pooling": list(poolings)}


def deletion_pooling_ranges(low: float, high: float, poolings: list[str]) -> dict:
    """Optuna-sampled deletion ratio in [low, high] and pooling among `poolings`."""
    return {"noise_ratio": tune.uniform(low, high), "pooling": tune.choice(list(poolings))}
