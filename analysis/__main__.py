"""`python -m analysis`: a mean ± std over seeds table of a sweep logged in MLflow.

Example:
    python -m analysis --experiment tsdae_deletion --group-by noise_ratio pooling \
        --metrics sts_test_at_best_dev best_sts_dev --csv table.csv
"""

from __future__ import annotations

import argparse
import sys

from analysis.runs import fetch_trial_runs, latest_sweep_run_id
from analysis.tables import aggregate, to_markdown
from sentsweep.errors import InputError
from sentsweep.tracking import resolve_tracking_uri


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", required=True, help="MLflow experiment (the sweep's name)")
    parser.add_argument("--group-by", nargs="+", required=True, help="params that define a table row")
    parser.add_argument("--metrics", nargs="+", default=["sts_test_at_best_dev", "best_sts_dev"])
    parser.add_argument("--tracking-uri", default=None, help="default: MLFLOW_TRACKING_URI or ./mlflow.db")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sweep-run-id", default=None, help="parent run of one sweep (default: the latest)")
    which.add_argument("--all-sweeps", action="store_true", help="pool the runs of every sweep")
    parser.add_argument("--csv", default=None, help="also write the table as CSV to this path")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    uri = resolve_tracking_uri(args.tracking_uri)
    try:
        sweep = None if args.all_sweeps else (args.sweep_run_id or latest_sweep_run_id(uri, args.experiment))
        runs = fetch_trial_runs(uri, args.experiment, sweep)
        table, left_out = aggregate(runs, args.group_by, args.metrics)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(to_markdown(table, args.group_by, args.metrics))
    print(f"\n{len(runs) - left_out} finished runs; {left_out} failed or unfinished runs left out.")
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"CSV written to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
