"""Run every benchmark and print one table of ratios (ours / reference, higher is better).

    .venv/bin/python -m benchmarks.run_all              # all of them (about an hour on 2 cores)
    .venv/bin/python -m benchmarks.run_all --only bm25 tsdae_training
"""

from __future__ import annotations

import argparse
import importlib

from benchmarks.common import machine

BENCHMARKS = ["tsdae_training", "contrastive_step", "encoding_retrieval", "bm25", "sweep_overhead", "gpu_packing",
              "analysis_10k_runs", "racing", "preparation_cache", "race_through_ray", "trial_process_start"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=BENCHMARKS)
    args = parser.parse_args()
    rows = []
    for name in args.only:
        module = importlib.import_module(f"benchmarks.{name}")
        for result in module.run():
            rows.append(result.row())
            print(rows[-1], flush=True)
    print(f"\nMachine: {machine()}\n")
    print("| benchmark | ours | reference | unit | reference is | ratio | goal |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
