"""A grid whose answer training decides: SimCSE and NM x learning rates on the tiny model and the demo data, every
trial in this process on one thread, and how far apart its configurations are in seed standard deviations.

Each (method, learning rate, seed) trains `--steps` steps (batch 8, max_seq_length 32, mean pooling, an STS dev
evaluation every 1/6 of the steps) through sentsweep's trainable (`sentsweep.trainables.catalog.train`). It prints
every configuration's mean best STS dev, seed sd and CPU seconds per trial, the untrained model's score (step 0),
the spread (the best configuration's mean less the worst's, in pooled seed sds), the best's margin over the
untrained model, and the significance group (Holm, alpha 0.05). What it is for: docs/performance.md, "A grid whose
answer training decides".

    .venv/bin/python -m benchmarks.trained_answer [--seeds 3] [--steps 300] [--lrs 1e-4 3e-4 1e-3]"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import Result

METHODS = ("simcse", "nm")
LRS = (1e-4, 3e-4, 1e-3)
SEEDS = 3
STEPS = 300
EVALUATIONS = 6
ALPHA = 0.05  # the tables' --alpha


def spread(scores: dict) -> dict:
    """{best, worst: (config, mean), seed_sd: the pooled sd of the seeds about their configuration's mean, range_sds:
    (best mean - worst mean) / seed_sd} of {config: {seed: value}}, each configuration with 2 or more seeds."""
    means = {config: statistics.fmean(values.values()) for config, values in scores.items()}
    squares = sum((value - means[config]) ** 2 for config, values in scores.items() for value in values.values())
    freedom = sum(len(values) - 1 for values in scores.values())
    seed_sd = (squares / freedom) ** 0.5
    best, worst = max(means, key=means.get), min(means, key=means.get)
    return {"best": (best, means[best]), "worst": (worst, means[worst]), "seed_sd": seed_sd,
            "range_sds": (means[best] - means[worst]) / seed_sd}


def train_grid(model: str, lrs, seeds: int, steps: int) -> tuple[dict, dict, float]:
    """({config: {seed: best STS dev}}, {config: [CPU seconds per trial]}, the untrained model's STS dev)."""
    import torch

    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
    from sentsweep.trainables.catalog import train
    from sentsweep.trainables.session import LocalSession

    scores: dict = {}
    cpu: dict = {}
    untrained = float("nan")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for method in METHODS:
            for lr in lrs:
                config = f"{method} lr={lr:g}"
                for seed in range(seeds):
                    session, started = LocalSession(), time.process_time()
                    train(dict(method=method, model=model, corpus=str(CORPUS_FILE),
                               dev_file=str(DEMO_DIR / "sts-dev.csv"), test_file=str(DEMO_DIR / "sts-test.csv"),
                               eval_format="stsb", pooling="mean", lr=lr, batch_size=8, max_steps=steps,
                               eval_steps=max(1, steps // EVALUATIONS), max_seq_length=32, seed=seed), session)
                    cpu.setdefault(config, []).append(time.process_time() - started)
                    scores.setdefault(config, {})[seed] = float(session.reports[-1]["best_sts_dev"])
                    untrained = float(session.reports[0]["sts_dev"])
    finally:
        torch.set_num_threads(threads)
    return scores, cpu, untrained


def run(seeds: int = SEEDS, steps: int = STEPS, lrs=LRS) -> list[Result]:
    from sentsweep.analysis.significance import best_group
    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.models import build_tiny_model
    from sentsweep.sweep.launch.launcher import read_corpus_pairs_text

    print(f"{len(METHODS)} methods x {len(lrs)} learning rates ({' '.join(f'{lr:g}' for lr in lrs)}) x {seeds} seeds, "
          f"{steps} steps, {EVALUATIONS} evaluations, one thread; load average at the start "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        model = str(build_tiny_model(Path(folder) / "tiny", read_corpus(CORPUS_FILE) + read_corpus_pairs_text()))
        scores, cpu, untrained = train_grid(model, lrs, seeds, steps)
    group = best_group(scores, alpha=ALPHA, correction="holm")
    figures = spread(scores)
    print(f"\nthe untrained model's STS dev (step 0): {untrained:.2f}\n")
    print("| configuration | mean best STS dev | seed sd | seeds | CPU s per trial |\n|---|---|---|---|---|")
    for config, values in sorted(scores.items(), key=lambda item: -statistics.fmean(item[1].values())):
        print(f"| {config} | {statistics.fmean(values.values()):.2f} | {statistics.stdev(values.values()):.2f} | "
              f"{len(values)} | {statistics.fmean(cpu[config]):.1f} |")
    print(f"\nspread: best {figures['best'][0]} {figures['best'][1]:.2f}, worst {figures['worst'][0]} "
          f"{figures['worst'][1]:.2f}, pooled seed sd {figures['seed_sd']:.2f}: the range is "
          f"{figures['range_sds']:.1f} seed sds; the best is {figures['best'][1] - untrained:+.2f} over the untrained "
          f"model; significance group (Holm, alpha {ALPHA}): {len(group.group)} of {len(scores)}: "
          f"{', '.join(group.group)}")
    return [Result("learning-rate grid, tiny model: best configuration over the untrained model",
                   figures["best"][1], untrained, "STS dev", "the untrained model")]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--lrs", type=float, nargs="+", default=list(LRS))
    args = parser.parse_args()
    for result in run(args.seeds, args.steps, args.lrs):
        print(result.row())
