"""Run every benchmark and print one table of ratios (ours / reference, higher is better).

    .venv/bin/python -m benchmarks.run_all              # all of them (about an hour on 2 cores)
    .venv/bin/python -m benchmarks.run_all --only bm25 tsdae_training
    .venv/bin/python -m benchmarks.run_all --only racing --record docs/benchmarks   # the page's record of it
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from benchmarks.common import machine
from benchmarks.record import printed_output, write_record

BENCHMARKS = ["tsdae_training", "contrastive_step", "encoding_retrieval", "bm25", "sweep_overhead", "gpu_packing",
              "analysis_10k_runs", "racing", "racing_ways", "frontier", "trained_answer", "trial_overhead",
              "preparation_cache", "race_through_ray", "trial_process_start", "driver_costs", "searchers"]
# a benchmark whose module runs it by another function than run(): name -> (module, function)
RUNNERS = {"racing_ways": ("racing", "run_ways")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=BENCHMARKS)
    parser.add_argument("--record", type=Path, metavar="FOLDER",
                        help="also write each benchmark's rows and printed output to FOLDER/<name>.md "
                             "(docs/benchmarks: the records docs/performance.md includes)")
    args = parser.parse_args()
    if args.record is not None and args.record.exists() and not args.record.is_dir():
        parser.error(f"--record {args.record}: not a folder")
    rows = []
    for name in args.only:
        module_name, function = RUNNERS.get(name, (name, "run"))
        run = getattr(importlib.import_module(f"benchmarks.{module_name}"), function)
        with printed_output() as printed:
            own_rows = [result.row() for result in run()]
        rows.extend(own_rows)
        print("\n".join(own_rows), flush=True)
        if args.record is not None:
            write_record(args.record, name, machine(), own_rows, printed.copy.getvalue())
    print(f"\nMachine: {machine()}\n")
    print("| benchmark | ours | reference | unit | reference is | ratio | goal |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
