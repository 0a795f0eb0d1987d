"""`sentsweep analyze importance` and `sentsweep analyze to-optuna`: a sweep's configurations (their seed means) as
an importance table and as an Optuna study that optuna-dashboard opens."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sentsweep.analysis import importance
from sentsweep.analysis.optuna_study import to_journal
from sentsweep.analysis.runs import fetch_sweep_runs, latest_sweep_run_id
from sentsweep.analysis.seed_means import configuration_means
from sentsweep.errors import InputError
from sentsweep.tracking.store import resolve_tracking_uri

COMMANDS = ("importance", "to-optuna")
DEFAULT_METRIC = "sts_test_at_best_dev"


def add_parsers(commands, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """The two sub-commands' parsers, each with the analysis' `common` options (experiment, store, sweep)."""
    ranking = commands.add_parser("importance", help="each swept param's importance over the configurations' seed "
                                  "means (Optuna's PED-ANOVA or fANOVA), with the seeds' spread beside it")
    common(ranking)
    ranking.add_argument("--metric", default=DEFAULT_METRIC, help=f"the metric (default: {DEFAULT_METRIC})")
    ranking.add_argument("--params", nargs="+", default=None, metavar="PARAM",
                         help="the params ranked (default: every swept param); configurations that do not set "
                              "every one are left out, and counted")
    ranking.add_argument("--evaluator", default="fanova", help=f"the importance method: "
                         f"{', '.join(importance.EVALUATORS)} (default: fanova)")
    ranking.add_argument("--resamples", type=int, default=importance.DEFAULT_RESAMPLES,
                         help=f"resamples of the seeds (default: {importance.DEFAULT_RESAMPLES})")
    ranking.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the resamples' random draws")
    ranking.add_argument("--lower-is-better", action="store_true", help="the best is the lowest mean")

    export = commands.add_parser("to-optuna", help="the sweep as an Optuna study in a JournalStorage file: one "
                                 "trial per configuration, its seed mean the value (optuna-dashboard FILE)")
    common(export)
    export.add_argument("--metric", default=DEFAULT_METRIC, help=f"the trials' value (default: {DEFAULT_METRIC})")
    export.add_argument("--output", required=True, help="the journal file to create (refused if it exists)")
    export.add_argument("--study-name", default=None, help="the study's name (default: the experiment's)")
    export.add_argument("--lower-is-better", action="store_true", help="a study that minimises the metric")


def run(args) -> None:
    """Run `args.command` (one of COMMANDS) and print what it made."""
    if args.command == "importance":
        importance.make_evaluator(args.evaluator)  # an unknown method is refused before any run is read
        if args.resamples < 1:
            raise InputError(f"--resamples must be at least 1, got {args.resamples}")
    uri = resolve_tracking_uri(args.tracking_uri)
    runs = fetch_sweep_runs(uri, args.experiment, args.sweep_run_id, args.all_sweeps)
    configurations, swept = configuration_means(runs, args.metric)
    if args.command == "to-optuna":
        name = args.study_name or args.experiment
        path = to_journal(configurations, swept, args.output, name, args.metric, not args.lower_is_better)
        sweep = ("every sweep" if args.all_sweeps
                 else f"sweep run {args.sweep_run_id or latest_sweep_run_id(uri, args.experiment)}")
        print(f"wrote study {name!r} to {path}: {len(configurations)} trials (one per configuration of {sweep}, "
              f"value: the mean of {args.metric} over its seeds; params: {', '.join(swept) or 'none'})")
        print(f"open it with: optuna-dashboard {path}")
        return
    params = args.params or swept
    unknown = [param for param in params if param not in swept]
    if unknown:
        raise InputError(f"--params: {', '.join(map(repr, unknown))} not swept (swept: {', '.join(swept) or 'none'})")
    if not params:
        raise InputError("the sweep's configurations differ in no param: nothing to rank")
    chosen = [c for c in configurations if all(param in c.params for param in params)]
    ranked = importance.param_importances(chosen, params, args.evaluator, not args.lower_is_better, args.resamples,
                                          args.bootstrap_seed)
    print(importance.to_markdown(ranked, args.evaluator, args.metric, len(chosen),
                                 len(configurations) - len(chosen), args.resamples))
