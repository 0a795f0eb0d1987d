"""The `sentsweep` command: run an experiment by name, analyse sweeps, evaluate a model, replay MLflow writes.

    sentsweep list                                   # the experiments and what each re-runs
    sentsweep run nm_weight --quick                  # = python sweeps/nm_weight.py --quick
    sentsweep analyze table --experiment nm_weight --rows method pooling --columns w
    sentsweep evaluate --model all-MiniLM-L6-v2 --sts-dir ../shared/data/stsbenchmark
    sentsweep replay sweep_outputs/mlflow-pending-1a2b3c4d.jsonl

Each sub-command's own options: `sentsweep <command> --help`.
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.errors import InputError

COMMANDS = {
    "list": "list the experiments",
    "run": "run an experiment by name: sentsweep run NAME [its options]",
    "analyze": "tables, significance tests, plots and reports of sweeps in MLflow",
    "evaluate": "a model or a lexical baseline on the STS benchmark and evaluation tasks",
    "replay": "write MLflow operations a sweep had to queue",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentsweep", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:8]))
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        command = commands.add_parser(name, help=help_text, add_help=name == "list")
        if name != "list":
            command.add_argument("arguments", nargs=argparse.REMAINDER, help="the sub-command's own options")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rest = getattr(args, "arguments", [])
    # lazy: each sub-command imports only what it needs, so `analyze` and `list` never import Ray or torch.
    if args.command == "analyze":
        from sentsweep.analysis.cli import main as analyze

        return analyze(rest)
    if args.command == "evaluate":
        from sentsweep.evaluate import main as evaluate  # lazy: see above

        return evaluate(rest, prog="sentsweep evaluate")
    if args.command == "replay":
        from sentsweep.tracking.writer import main as replay  # lazy: see above

        return replay(rest, prog="sentsweep replay")
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: see above

    if args.command == "list":
        for name in experiment_names():
            print(f"{name:24} {get_experiment(name).description}")
        return 0
    if not rest or rest[0] in ("-h", "--help"):
        print("usage: sentsweep run NAME [options]; NAME is one of: " + ", ".join(experiment_names()))
        return 0 if rest else 2
    from sentsweep.sweep import run_sweep  # lazy: see above

    try:
        definition = get_experiment(rest[0])
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return run_sweep(definition, rest[1:], prog=f"sentsweep run {rest[0]}")


if __name__ == "__main__":
    sys.exit(main())
