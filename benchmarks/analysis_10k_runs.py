"""Benchmark: a comparison table over 10,000 MLflow runs (goal: under 30 s, fetch once + pandas).

Generates a SQLite MLflow store with one sweep of 10,000 trial runs (method x w x pooling x 50 seeds ...),
once, under benchmarks/.cache/, then times fetching the runs and building the table.

    .venv/bin/python -m benchmarks.analysis_10k_runs [--runs 10000]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"


def generate(uri: str, count: int) -> None:
    import numpy as np
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    experiment_id = client.create_experiment("bench")
    parent = client.create_run(experiment_id, tags={"role": "sweep", "sweep": "bench"}).info.run_id
    rng = np.random.default_rng(0)
    grid = itertools.product(["tsdae", "simcse", "nm", "ct", "mlm"], [1.0, 0.1, 0.01, 0.001], ["cls", "mean"],
                             range(10**6))
    for index, (method, w, pooling, seed) in enumerate(itertools.islice(grid, 0, None, 1)):
        if index == count:
            break
        run = client.create_run(experiment_id).info.run_id
        tags = {"sweep_run_id": parent, "mlflow.parentRunId": parent, "seed": str(seed % 250),
                "config_hash": f"{method}{w}{pooling}"}
        params = {"method": method, "w": str(w), "pooling": pooling, "seed": str(seed % 250), "lr": "3e-05"}
        value = float(rng.normal(70, 2))
        client.log_batch(
            run,
            metrics=[Metric("sts_test_at_best_dev", value, 0, 0), Metric("best_sts_dev", value + 3, 0, 0)],
            params=[Param(k, v) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        client.set_terminated(run)


def run(count: int = 10_000) -> list:
    from benchmarks.common import Result

    CACHE.mkdir(exist_ok=True)
    database = CACHE / f"mlflow-{count}.db"
    uri = f"sqlite:///{database}"
    if not database.exists():
        start = time.perf_counter()
        generate(uri, count)
        print(f"generated {count} runs in {time.perf_counter() - start:.0f} s")

    from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
    from sentsweep.analysis.tables import build_table, to_markdown

    start = time.perf_counter()
    runs = fetch_trial_runs(uri, "bench", latest_sweep_run_id(uri, "bench"))
    fetched = time.perf_counter()
    table = build_table(runs, ["method", "pooling"], ["sts_test_at_best_dev"], column_param="w")
    to_markdown(table)
    done = time.perf_counter()
    print(f"{len(runs)} runs: fetch {fetched - start:.2f} s, table {done - fetched:.2f} s, total {done - start:.2f} s")
    return [Result(f"table over {len(runs)} MLflow runs (SQLite)", len(runs) / (done - start), len(runs) / 30.0,
                   "runs/s", "the 30 s budget", goal=1.0)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    for result in run(parser.parse_args().runs):
        print(result.row())
