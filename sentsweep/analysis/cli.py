"""`sentsweep analyze` (or `python -m sentsweep.analysis`): comparison tables and plots of sweeps logged in MLflow.

    sentsweep analyze table --experiment nm_weight --rows method pooling --columns w \\
        --metrics sts_test_at_best_dev --latex table.tex --csv table.csv
    sentsweep analyze table --experiment tsdae_deletion --rows noise_ratio pooling
    sentsweep analyze compare --experiment nm_weight --metric sts_test_at_best_dev \\
        --first method=mlm+nm w=0.1 --second method=tsdae+nm w=0.1
    sentsweep analyze compare --experiment nm_weight --metric squad_top1 --per-query \
        --first method=mlm+nm --second method=tsdae+nm
    sentsweep analyze plot --experiment sample_size --x sample_size --lines method --log-x --output plot.png
    sentsweep analyze report --experiment nm_weight --rows method pooling --columns w --lines method \
        --log-x --output docs/example_report.md

Runs are those of the experiment's latest sweep unless --sweep-run-id or --all-sweeps says otherwise.
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.analysis.plots import plot_metric
from sentsweep.analysis.report import write_report
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id, per_query_outcomes
from sentsweep.analysis.significance import compare, paired_items_test
from sentsweep.analysis.tables import build_table, to_frame, to_latex, to_markdown
from sentsweep.errors import InputError
from sentsweep.tracking.store import resolve_tracking_uri

DEFAULT_METRICS = ["sts_test_at_best_dev", "best_sts_dev"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiment", required=True, help="MLflow experiment (a sweep's name)")
    parser.add_argument("--tracking-uri", default=None, help="default: MLFLOW_TRACKING_URI or ./mlflow.db")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sweep-run-id", default=None, help="parent run of one sweep (default: the latest)")
    which.add_argument("--all-sweeps", action="store_true", help="pool the runs of every sweep of the experiment")


def parse_args(argv=None, prog: str = "sentsweep analyze") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    table = commands.add_parser("table", help="mean ± std over seeds, best marked (Markdown, LaTeX, CSV)")
    _common(table)
    table.add_argument("--rows", nargs="+", required=True, help="params that define a row")
    table.add_argument("--columns", default=None, help="a param whose values become columns (one metric)")
    table.add_argument("--metrics", nargs="+", default=DEFAULT_METRICS)
    table.add_argument("--lower-is-better", action="store_true")
    table.add_argument("--csv", help="write every cell with its bootstrap CI, p-value and selected steps to this CSV")
    table.add_argument("--latex", help="write a booktabs LaTeX table to this file")

    comparison = commands.add_parser("compare", help="t-test of two configurations over seeds")
    _common(comparison)
    comparison.add_argument("--metric", default=DEFAULT_METRICS[0])
    comparison.add_argument("--first", nargs="+", required=True, help="param=value ... of the first config")
    comparison.add_argument("--second", nargs="+", required=True, help="param=value ... of the second config")
    comparison.add_argument("--per-query", action="store_true",
                            help="paired test over the task's queries (--metric names a per-query outcome, "
                            "e.g. squad_top1 or askubuntu_ap) instead of over seeds")

    plot = commands.add_parser("plot", help="metric vs a param, mean ± std band, one line per group")
    _common(plot)
    plot.add_argument("--x", required=True)
    plot.add_argument("--metric", default=DEFAULT_METRICS[0])
    plot.add_argument("--lines", nargs="+", default=None, help="params that separate the lines (e.g. method)")
    plot.add_argument("--log-x", action="store_true")
    plot.add_argument("--output", required=True, help="PNG path; a PDF is written beside it")

    report = commands.add_parser("report", help="a Markdown report: the table, a plot, the LaTeX source")
    _common(report)
    report.add_argument("--rows", nargs="+", required=True)
    report.add_argument("--columns", required=True, help="the swept param (columns of the table, x of the plot)")
    report.add_argument("--metric", default=DEFAULT_METRICS[0])
    report.add_argument("--lines", nargs="+", default=None, help="params that separate the plot's lines")
    report.add_argument("--log-x", action="store_true")
    report.add_argument("--output", required=True, help="the report's Markdown path; the plot goes beside it")
    return parser.parse_args(argv)


def fetch(args):
    uri = resolve_tracking_uri(args.tracking_uri)
    sweep = None if args.all_sweeps else (args.sweep_run_id or latest_sweep_run_id(uri, args.experiment))
    return fetch_trial_runs(uri, args.experiment, sweep)


def _select(runs, assignments: list[str]):
    chosen = runs[runs["status"] == "FINISHED"]
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        if f"params.{name}" not in chosen:
            raise InputError(f"runs have no param {name!r}")
        column = chosen[f"params.{name}"]
        numeric = _to_float(value)
        chosen = chosen[column.map(_to_float) == numeric] if numeric is not None else chosen[column == value]
    return chosen


def _to_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def compare_per_query(args, first, second) -> None:
    """Print the paired t-test over items of two configurations' per-query outcomes, on their shared seeds."""
    uri = resolve_tracking_uri(args.tracking_uri)
    shared = sorted(set(first["seed"]) & set(second["seed"]))
    if not shared:
        raise InputError("the two configurations share no seed")
    outcomes = []
    for side in (first, second):
        by_seed = dict(zip(side["seed"], side["run_id"]))
        runs = [per_query_outcomes(uri, by_seed[seed]) for seed in shared]
        if any(args.metric not in run for run in runs):
            raise InputError(f"no per-query outcomes named {args.metric!r}; the runs have {sorted(runs[0])}")
        outcomes.append([run[args.metric] for run in runs])
    result = paired_items_test(*outcomes)
    for name, side in zip((args.first, args.second), outcomes):
        print(f"{' '.join(name)}: mean {100 * sum(map(sum, side)) / sum(map(len, side)):.2f}")
    print(f"{result.test} ({result.n} items, seeds {', '.join(shared)}): "
          f"t = {result.statistic:.3f}, p = {result.p_value:.4f}")


def main(argv=None, prog: str = "sentsweep analyze") -> int:
    args = parse_args(argv, prog)
    try:
        runs = fetch(args)
        if args.command == "table":
            table = build_table(runs, args.rows, args.metrics, args.columns, not args.lower_is_better)
            print(to_markdown(table))
            if args.csv:
                to_frame(table).to_csv(args.csv, index=False)
                print(f"CSV written to {args.csv}")
            if args.latex:
                with open(args.latex, "w", encoding="utf-8") as handle:
                    handle.write(to_latex(table) + "\n")
                print(f"LaTeX written to {args.latex}")
        elif args.command == "compare" and args.per_query:
            compare_per_query(args, *(_select(runs, side) for side in (args.first, args.second)))
        elif args.command == "compare":
            first, second = (_select(runs, side) for side in (args.first, args.second))
            values = [dict(zip(s["seed"], s[f"metrics.{args.metric}"].astype(float))) for s in (first, second)]
            if min(len(v) for v in values) < 2:
                raise InputError(f"need at least 2 seeds per side, found {[len(v) for v in values]}")
            result = compare(*values)
            print(f"{' '.join(args.first)}: mean {sum(values[0].values()) / len(values[0]):.2f} (n={len(values[0])})")
            print(f"{' '.join(args.second)}: mean {sum(values[1].values()) / len(values[1]):.2f} (n={len(values[1])})")
            print(f"{result.test}-test over {result.n} seeds: t = {result.statistic:.3f}, p = {result.p_value:.4f}")
        elif args.command == "plot":
            paths = plot_metric(runs, args.x, args.metric, args.lines, args.output, args.log_x)
            print("wrote " + ", ".join(map(str, paths)))
        else:
            print(f"wrote {write_report(runs, args)}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0

