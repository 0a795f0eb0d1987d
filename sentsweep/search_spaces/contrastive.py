"""Search spaces of the contrastive and multi-task experiments (theses 000 chapter 6 and 001 chapter 5).

- Noise Matching (Reiml 2023, section 5.4.2 / table 6.10): MLM + w NM and TSDAE + w NM, CLS and mean pooling,
  12.5K steps, batch size 64 (8 makes contrastive objectives too easy), lr 3e-5, 3 seeds.
- Multi-task (Wang 2022, tables 5.16 / 5.17, eq. 3.6): SimCSE + w CLM-AE and SimCSE + w MLM-AE with
  w in {0.1, 0.01, 0.001, 0.0001}, 3 seeds.
"""

from __future__ import annotations

from ray import tune

NM_METHODS = ["mlm+nm", "tsdae+nm"]
NM_WEIGHTS = [1.0, 0.1, 0.01, 0.001]
NM_SETTINGS = dict(pooling="cls", lr=3e-5, batch_size=64, max_steps=12_500, eval_steps=1_250, max_seq_length=128,
                   seeds=3)

MULTITASK_METHODS = ["simcse+clm_ae", "simcse+mlm_ae"]
MULTITASK_WEIGHTS = [0.1, 0.01, 0.001, 0.0001]
MULTITASK_SETTINGS = dict(pooling="cls", lr=3e-5, batch_size=64, max_steps=12_500, eval_steps=1_250,
                          max_seq_length=64, seeds=3)

CONTRASTIVE_METHODS = ["simcse", "nm", "ct", "consert"]
BATCH_SIZES = [8, 16, 32, 64, 128, 256]
LEARNING_RATES = [1e-5, 3e-5, 5e-5, 1e-4]
SAMPLE_SIZES = [2**k for k in range(7, 17)]  # 128 ... 65,536 sentences
SAMPLE_SIZE_METHODS = ["tsdae", "simcse", "nm", "ct", "mlm"]

QUICK_SETTINGS = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)


def weight_ranges(low: float, high: float) -> dict:
    """Optuna: w log-uniform in [low, high]."""
    return {"w": tune.loguniform(low, high)}


def learning_rate_ranges(low: float, high: float) -> dict:
    """Optuna: learning rate log-uniform in [low, high]."""
    return {"lr": tune.loguniform(low, high)}
