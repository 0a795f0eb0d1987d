"""The `sentsweep` command: run an experiment by name, analyse sweeps, evaluate a model, replay MLflow writes.

    sentsweep list                                   # the experiments and what each re-runs
    sentsweep run nm_weight --quick                  # = python sweeps/nm_weight.py --quick
    sentsweep analyze table --experiment nm_weight --rows method pooling --columns w
    sentsweep models register --experiment nm_weight --stage multitask_w
    sentsweep models export models:/nm_weight/1 my_model/
    sentsweep evaluate --model all-MiniLM-L6-v2 --sts-dir ../shared/data/stsbenchmark
    sentsweep replay sweep_outputs/mlflow-pending-1a2b3c4d.jsonl
    sentsweep build-distractors --model bert-large-uncased --sts-dir data/stsbenchmark --output-dir pools
    sentsweep cache list --storage-path sweep_outputs/ray   # prune: --older-than DAYS or --all

Each sub-command's own options: `sentsweep <command> --help`.
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.errors import InputError
from sentsweep.registry import unknown_name

COMMANDS = {
    "list": "list the experiments",
    "run": "run an experiment by name: sentsweep run NAME [its options]",
    "analyze": "tables, significance tests, plots and reports of sweeps in MLflow",
    "models": "register a sweep's best models in the MLflow Model Registry; export a model to a folder",
    "evaluate": "a model or a lexical baseline on the STS benchmark and evaluation tasks",
    "replay": "write MLflow operations a sweep had to queue",
    "build-distractors": "the STS-B distractor pools of Malmberg (2021) from a masked LM (--eval-task distractors=)",
    "cache": "list or prune the preparation cache of a storage path (sentsweep cache list|prune --storage-path PATH)",
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser, for `sentsweep --help`; each sub-command parses its own options."""
    parser = argparse.ArgumentParser(prog="sentsweep", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:11]))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        commands.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        build_parser().print_help()
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: {unknown_name('command', command, COMMANDS)}", file=sys.stderr)
        return 2
    # lazy: each sub-command imports only what it needs, so `analyze` and `list` never import Ray or torch.
    if command == "analyze":
        from sentsweep.analysis.cli import main as analyze  # lazy: see above

        return analyze(rest)
    if command == "models":
        from sentsweep.analysis.model_registry import main as models  # lazy: see above

        return models(rest, prog="sentsweep models")
    if command == "evaluate":
        from sentsweep.evaluate import main as evaluate  # lazy: see above

        return evaluate(rest, prog="sentsweep evaluate")
    if command == "replay":
        from sentsweep.tracking.writer import main as replay  # lazy: see above

        return replay(rest, prog="sentsweep replay")
    if command == "build-distractors":
        from sentsweep.distractor_data import main as build_distractors  # lazy: see above

        return build_distractors(rest, prog="sentsweep build-distractors")
    if command == "cache":
        from sentsweep.preparation_cache.maintenance import main as cache  # lazy: see above

        return cache(rest, prog="sentsweep cache")
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: see above

    if command == "list":
        for name in experiment_names():
            definition = get_experiment(name)
            source = definition.reference.label if definition.reference else "project"
            print(f"{name:24} [{source:7}] {definition.description}")
        return 0
    if not rest or rest[0] in ("-h", "--help"):
        print("usage: sentsweep run NAME [options]; NAME is one of: " + ", ".join(experiment_names()))
        return 0 if rest else 2
    from sentsweep.sweep import run_sweep  # lazy: see above

    try:
        definition = sweep_of_file(rest[0]) if rest[0].endswith(".py") else get_experiment(rest[0])
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return run_sweep(definition, rest[1:], prog=f"sentsweep run {rest[0]}")


def sweep_of_file(path: str):
    """The `SweepDefinition` a sweep file of one's own declares (imported as a module, see sentsweep.plugins)."""
    from sentsweep.plugins import load_user_file  # lazy: see above
    from sentsweep.sweep import SweepDefinition  # lazy: see above

    module = load_user_file(path)
    definitions = [value for value in vars(module).values() if isinstance(value, SweepDefinition)]
    if len(definitions) != 1:
        raise InputError(f"{path} declares {len(definitions)} SweepDefinition(s) at module level; "
                         "`sentsweep run FILE` needs exactly one")
    return definitions[0]


if __name__ == "__main__":
    sys.exit(main())
