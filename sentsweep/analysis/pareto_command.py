"""`sentsweep analyze pareto`: a sweep's configurations over several objectives, the Pareto set marked with the
seeds' uncertainty (`sentsweep.analysis.pareto`), and its plot with error bars."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sentsweep.analysis.pareto import check_objectives, pareto_front, plot_front, to_markdown
from sentsweep.analysis.runs import fetch_sweep_runs
from sentsweep.tracking.store import resolve_tracking_uri

COMMAND = "pareto"


def add_objective_option(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("--objective", action="append", required=required, metavar="NAME:max|min",
                        help="an objective (repeat it, at least twice): a metric (best_sts_dev), a compute total "
                             "(gpu_hours, cpu_hours, wall_hours) or a numeric param (max_seq_length), and its "
                             "direction")


def add_parser(commands, common: Callable, significance: Callable) -> None:
    """The `pareto` sub-command's parser, with the analysis' `common` and `significance` options."""
    parser = commands.add_parser(COMMAND, help="configurations over several objectives, the Pareto set marked with "
                                 "the seeds' uncertainty, and its plot with error bars")
    common(parser)
    parser.add_argument("--rows", nargs="+", required=True, metavar="PARAM",
                        help="params whose values make a configuration (e.g. method pooling)")
    add_objective_option(parser, required=True)
    parser.add_argument("--plot", default=None, help="write the front's plot (first two objectives) to this PNG; "
                        "a PDF is written beside it")
    significance(parser)


def run(args) -> None:
    """Print the Pareto table of args' sweep (and write its plot with --plot); objectives are checked first."""
    objectives = check_objectives(args.objective)
    runs = fetch_sweep_runs(resolve_tracking_uri(args.tracking_uri), args.experiment, args.sweep_run_id,
                            args.all_sweeps)
    result = pareto_front(runs, args.rows, objectives, args.alpha, args.correction)
    print(to_markdown(result))
    if args.plot:
        print("wrote " + ", ".join(map(str, plot_front(result, args.plot, title=f"{args.experiment}: Pareto front"))))
