"""`sentsweep analyze` (or `python -m sentsweep.analysis`): comparison tables and plots of sweeps logged in MLflow.

Runs are those of the experiment's latest sweep unless --sweep-run-id or --all-sweeps says otherwise; each
sub-command (table, compare, suite, plot, report, pareto, importance, to-optuna) prints what it computed and
exits 2 on a bad option.

    sentsweep analyze table --experiment nm_weight --rows method pooling \\
        --columns w --metrics sts_test_at_best_dev --latex t.tex --csv t.csv
    sentsweep analyze importance --experiment nm_weight

Every sub-command with an example, and what the marks of a table mean: docs/analysis.md."""

from __future__ import annotations

import argparse
import sys

import sentsweep.analysis.pareto_command as pareto_command
import sentsweep.analysis.study_commands as study_commands
import sentsweep.analysis.suite as suite
from sentsweep.analysis.compute import compute_by_cell, compute_markdown
from sentsweep.analysis.pareto import check_objectives
from sentsweep.analysis.plots import plot_metric
from sentsweep.analysis.report import ReportRequest, write_report
from sentsweep.analysis.reproduction import TARGETS_ARTIFACT, targets_from_json
from sentsweep.analysis.runs import fetch_sweep_runs, latest_sweep_run_id, per_query_outcomes, run_artifact_text
from sentsweep.analysis.significance import CORRECTIONS, compare, paired_items_test
from sentsweep.analysis.tables import build_table, per_query_name, to_frame, to_latex, to_markdown
from sentsweep.errors import InputError
from sentsweep.terminal import HelpFormatter
from sentsweep.tracking.store import resolve_tracking_uri

DEFAULT_METRICS = ["sts_test_at_best_dev", "best_sts_dev"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiment", required=True, help="MLflow experiment (a sweep's name)")
    parser.add_argument("--tracking-uri", default=None, help="default: MLFLOW_TRACKING_URI or ./mlflow.db")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sweep-run-id", default=None, help="parent run of one sweep (default: the latest)")
    which.add_argument("--all-sweeps", action="store_true", help="pool the runs of every sweep of the experiment")


def _significance(parser: argparse.ArgumentParser) -> None:
    """--alpha and --correction of the best groups; checked by check_significance (an InputError, not argparse's)."""
    parser.add_argument("--alpha", default="0.05", help="significance level of the best groups, in (0, 1) "
                        "(default 0.05)")
    parser.add_argument("--correction", default="holm", help=f"adjustment of the p-values of all pairs of a "
                        f"column together: {', '.join(CORRECTIONS)} (default holm)")


def parse_args(argv=None, prog: str = "sentsweep analyze") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter, epilog="examples:\n" + __doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    table = commands.add_parser("table", help="mean ± std over seeds, best and its group marked (Markdown, LaTeX, CSV)")
    _common(table)
    table.add_argument("--rows", nargs="+", required=True, metavar="PARAM",
                       help="params whose values make a row (e.g. method pooling)")
    table.add_argument("--columns", default=None, metavar="PARAM",
                       help="a param whose values become the columns, of one metric (default: a column per metric)")
    table.add_argument("--metrics", nargs="+", default=DEFAULT_METRICS, metavar="METRIC",
                       help=f"metrics of the columns (default: {' '.join(DEFAULT_METRICS)})")
    table.add_argument("--lower-is-better", action="store_true", help="the best is the lowest mean (a loss)")
    table.add_argument("--csv", help="write every cell with its bootstrap CI, p-values against the best, group "
                       "membership and selected steps to this CSV")
    table.add_argument("--latex", help="write a booktabs LaTeX table to this file")
    table.add_argument("--compute", action="store_true",
                       help="also print the compute each cell's runs spent (CPU, GPU and wall hours, all runs "
                            "finished or not) and the sweep's total")
    _significance(table)
    table.add_argument("--per-query", action="store_true",
                       help="test columns of metrics with per-query outcomes (e.g. squad_top1, askubuntu_map) over "
                       "queries instead of seeds; fetches every run's per_query.json (slow)")

    comparison = commands.add_parser("compare", help="t-test of two configurations over seeds")
    _common(comparison)
    comparison.add_argument("--metric", default=DEFAULT_METRICS[0],
                            help=f"the metric compared (default: {DEFAULT_METRICS[0]})")
    comparison.add_argument("--first", nargs="+", required=True, help="param=value ... of the first config")
    comparison.add_argument("--second", nargs="+", required=True, help="param=value ... of the second config")
    comparison.add_argument("--per-query", action="store_true",
                            help="paired test over the task's queries (--metric names a per-query outcome, "
                            "e.g. squad_top1 or askubuntu_ap) instead of over seeds")

    plot = commands.add_parser("plot", help="metric vs a param, mean ± std band, one line per group")
    _common(plot)
    plot.add_argument("--x", required=True, metavar="PARAM", help="the swept param on the x axis (e.g. w)")
    plot.add_argument("--metric", default=DEFAULT_METRICS[0],
                      help=f"the metric on the y axis (default: {DEFAULT_METRICS[0]})")
    plot.add_argument("--lines", nargs="+", default=None, metavar="PARAM",
                      help="params that separate the lines (e.g. method; default: one line)")
    plot.add_argument("--log-x", action="store_true", help="a logarithmic x axis (base 2 for sample_size)")
    plot.add_argument("--output", required=True, help="PNG path; a PDF is written beside it")

    report = commands.add_parser("report", help="a Markdown report: the table, a plot, the LaTeX source")
    _common(report)
    report.add_argument("--rows", nargs="+", required=True, metavar="PARAM",
                        help="params whose values make a row of the table (e.g. method pooling)")
    report.add_argument("--columns", required=True, metavar="PARAM",
                        help="the swept param (columns of the table, x of the plot)")
    report.add_argument("--metric", default=DEFAULT_METRICS[0],
                        help=f"the metric of the table and the plot (default: {DEFAULT_METRICS[0]})")
    report.add_argument("--lines", nargs="+", default=None, metavar="PARAM",
                        help="params that separate the plot's lines (default: one line)")
    report.add_argument("--log-x", action="store_true", help="a logarithmic x axis (base 2 for sample_size)")
    report.add_argument("--output", required=True, help="the report's Markdown path; the plot goes beside it")
    _significance(report)
    suite_parser = commands.add_parser(
        "suite", help="average over a suite of tasks with a bootstrap CI over seeds (and queries) and rank interval")
    _common(suite_parser)
    suite_parser.add_argument("--rows", nargs="+", required=True,
                              help="params that define a configuration (e.g. method)")
    which = suite_parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--suite", help=f"a named suite: {', '.join([*suite.SUITES, suite.MTEB_SUITE])} (mteb: every "
                       "MTEB task the runs scored)")
    which.add_argument("--metrics", nargs="+", help="an explicit suite: the metrics of its tasks")
    suite_parser.add_argument("--items", action="store_true",
                              help="also resample queries, for the tasks whose runs stored per-query outcomes")
    suite_parser.add_argument("--resamples", type=int, default=suite.DEFAULT_RESAMPLES,
                              help=f"bootstrap resamples (default: {suite.DEFAULT_RESAMPLES})")
    suite_parser.add_argument("--confidence", type=float, default=0.95,
                              help="level of the intervals (default: 0.95)")
    suite_parser.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the bootstrap's random draws")
    suite_parser.add_argument("--lower-is-better", action="store_true", help="the best is the lowest mean")
    suite_parser.add_argument("--csv", help="write one line per configuration (CI, ranks, task means) to this CSV")
    study_commands.add_parsers(commands, _common)
    pareto_command.add_parser(commands, _common, _significance)
    pareto_command.add_objective_option(report, required=False)
    return parser.parse_args(argv)


def check_significance(args) -> None:
    """--alpha as a float in (0, 1) and --correction one of significance.CORRECTIONS, else an InputError naming
    the value; --per-query only with a metric that has per-query outcomes. Called before any run is fetched."""
    try:
        alpha = float(args.alpha)
    except (TypeError, ValueError):
        alpha = float("nan")
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must be a number in (0, 1), got {args.alpha!r}")
    args.alpha = alpha
    if args.correction not in CORRECTIONS:
        raise InputError(f"--correction must be one of {', '.join(CORRECTIONS)}, got {args.correction!r}")
    if getattr(args, "per_query", False) and not any(map(per_query_name, args.metrics)):
        raise InputError(f"--per-query: none of the metrics {args.metrics} has per-query outcomes (<task>_top1 of a "
                         "distractor task, <task>_map or <task>_map_at_100 of a retrieval task, "
                         "mteb_<Task>_main_score of an MTEB task)")


def table_per_query(args, runs) -> dict:
    """{run_id: {outcome: [outcome per query]}} of the finished runs that scored a metric of the table with
    per-query outcomes (tables.per_query_name); a run without the artifact is left out, and the table then tests
    its column over seeds and says why."""
    uri = resolve_tracking_uri(args.tracking_uri)
    columns = [f"metrics.{m}" for m in args.metrics if per_query_name(m) and f"metrics.{m}" in runs]
    finished = runs[runs["status"] == "FINISHED"]
    run_ids = list(finished.loc[finished[columns].notna().any(axis=1), "run_id"]) if columns else []
    print(f"fetching the per-query outcomes of {len(run_ids)} runs", file=sys.stderr)
    outcomes = {}
    for run_id in run_ids:
        try:
            outcomes[run_id] = per_query_outcomes(uri, run_id)
        except InputError:
            continue
    return outcomes


def report_targets(args) -> tuple:
    """The reproduction targets the reported sweep declared (on its MLflow run; the latest sweep's with
    --all-sweeps); () for a sweep that declared none."""
    uri = resolve_tracking_uri(args.tracking_uri)
    sweep = args.sweep_run_id or latest_sweep_run_id(uri, args.experiment)
    text = run_artifact_text(uri, sweep, TARGETS_ARTIFACT)
    return targets_from_json(text) if text else ()


def fetch(args):
    return fetch_sweep_runs(resolve_tracking_uri(args.tracking_uri), args.experiment, args.sweep_run_id,
                            args.all_sweeps)


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


def print_suite(args) -> None:
    """The suite table of the runs (and its CSV with --csv); --suite/--metrics are checked before any fetch."""
    suite.suite_metrics(args.suite if args.suite is not None else args.metrics)
    uri = resolve_tracking_uri(args.tracking_uri)
    runs = fetch_sweep_runs(uri, args.experiment, args.sweep_run_id, args.all_sweeps)
    metrics = suite.suite_metrics(args.suite if args.suite is not None else args.metrics, runs)
    items = suite.fetch_item_outcomes(uri, runs, args.rows, metrics) if args.items else None
    result = suite.suite_intervals(runs, args.rows, args.suite if args.suite is not None else metrics, items,
                                   higher_is_better=not args.lower_is_better, confidence=args.confidence,
                                   resamples=args.resamples, random_seed=args.bootstrap_seed)
    print(suite.to_markdown(result))
    if args.csv:
        suite.to_frame(result).to_csv(args.csv, index=False)
        print(f"CSV written to {args.csv}")


def main(argv=None, prog: str = "sentsweep analyze") -> int:
    args = parse_args(argv, prog)
    try:
        if args.command == "suite":
            print_suite(args)
            return 0
        if args.command in study_commands.COMMANDS:
            study_commands.run(args)
            return 0
        if args.command in ("table", "report", pareto_command.COMMAND):
            check_significance(args)
        if getattr(args, "objective", None):
            check_objectives(args.objective)  # before any run is read
        if args.command == pareto_command.COMMAND:
            pareto_command.run(args)
            return 0
        runs = fetch(args)
        if args.command == "table":
            per_query = table_per_query(args, runs) if args.per_query else None
            table = build_table(runs, args.rows, args.metrics, args.columns, not args.lower_is_better,
                                alpha=args.alpha, correction=args.correction, per_query=per_query)
            print(to_markdown(table))
            if args.compute:
                compute = compute_by_cell(runs, args.rows + ([args.columns] if args.columns else []))
                print(f"\nCompute per cell (every run, finished or not):\n\n{compute_markdown(compute)}")
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
            request = ReportRequest(experiment=args.experiment, rows=tuple(args.rows), columns=args.columns,
                                    metric=args.metric, lines=tuple(args.lines or ()), log_x=args.log_x,
                                    output=args.output, alpha=args.alpha, correction=args.correction,
                                    objectives=tuple(check_objectives(args.objective)) if args.objective else ())
            print(f"wrote {write_report(runs, request, report_targets(args))}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0

