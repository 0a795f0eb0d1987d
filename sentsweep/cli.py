"""The `sentsweep` command: run an experiment by name, analyse sweeps, evaluate a model, replay MLflow writes.

    sentsweep list                                   # the experiments and what each re-runs
    sentsweep run nm_weight --quick                  # = python sweeps/nm_weight.py --quick
    sentsweep analyze table --experiment nm_weight --rows method pooling --columns w
    sentsweep models register --experiment nm_weight --stage multitask_w
    sentsweep models export models:/nm_weight/1 my_model/
    sentsweep evaluate --model all-MiniLM-L6-v2 --sts-dir ../shared/data/stsbenchmark
    sentsweep replay sweep_outputs/mlflow-pending-1a2b3c4d.jsonl
    sentsweep rerun 3f2a1bc9d8e74f6a --tracking-uri sqlite:///mlflow.db   # a sweep again from its run's record
    sentsweep ui                                     # MLflow's UI on ./mlflow.db, the newest sweep's link
    sentsweep build-distractors --model bert-large-uncased --sts-dir data/stsbenchmark --output-dir pools
    sentsweep cache list --storage-path sweep_outputs/ray   # prune: --older-than DAYS or --all

Each sub-command's own options: `sentsweep <command> --help`.
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.errors import InputError
from sentsweep.references import SOURCE_DOCUMENTS
from sentsweep.registry import unknown_name
from sentsweep.terminal import HelpFormatter, closed_pipe, terminal_columns, wrap_paragraph
from sentsweep.version import version_line

COMMANDS = {
    "list": "list the experiments",
    "run": "run an experiment by name: sentsweep run NAME [its options]",
    "analyze": "tables, significance tests, plots and reports of sweeps in MLflow",
    "models": "register a sweep's best models in the MLflow Model Registry; export a model to a folder",
    "evaluate": "a model or a lexical baseline on the STS benchmark and evaluation tasks",
    "replay": "write MLflow operations a sweep had to queue",
    "rerun": "start a sweep again from its MLflow run's record and compare the tables: sentsweep rerun RUN_ID",
    "ui": "MLflow's UI over a sweep store (one worker, 127.0.0.1), printing the newest sweep's link",
    "build-distractors": "the STS-B distractor pools of Malmberg (2021) from a masked LM (--eval-task distractors=)",
    "cache": "list or prune the preparation cache of a storage path (sentsweep cache list|prune --storage-path PATH)",
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser, for `sentsweep --help` and `--version`; each sub-command parses its own options."""
    parser = argparse.ArgumentParser(prog="sentsweep", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter,
                                     epilog="examples:\n" + "\n".join(__doc__.splitlines()[2:13]))
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        commands.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    """`sentsweep ...`; returns the exit code. A reader that closes the pipe early (`sentsweep list | head -2`) ends
    the command quietly, as a shell tool does."""
    try:
        code = dispatch(sys.argv[1:] if argv is None else list(argv))
        sys.stdout.flush()  # here, not at exit: a closed pipe is then met where it is handled
        return code
    except BrokenPipeError:
        return closed_pipe()


def dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "--version"):
        parser = build_parser()
        if not argv:
            parser.print_help()
            return 2
        parser.parse_args(argv[:1])  # prints the help or the version, and exits 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: {unknown_name('command', command, COMMANDS)}", file=sys.stderr)
        return 2
    if command == "analyze":
        from sentsweep.analysis.cli import main as analyze  # lazy: ray, torch

        return analyze(rest)
    if command == "models":
        from sentsweep.analysis.model_registry import main as models  # lazy: ray, torch

        return models(rest, prog="sentsweep models")
    if command == "evaluate":
        from sentsweep.evaluate import main as evaluate  # lazy: ray, torch

        return evaluate(rest, prog="sentsweep evaluate")
    if command == "replay":
        from sentsweep.tracking.writer import main as replay  # lazy: ray, torch

        return replay(rest, prog="sentsweep replay")
    if command == "rerun":
        from sentsweep.sweep_rerun import main as rerun  # lazy: ray, torch

        return rerun(rest, prog="sentsweep rerun")
    if command == "ui":
        from sentsweep.tracking.ui import main as ui  # lazy: ray, torch

        return ui(rest, prog="sentsweep ui")
    if command == "build-distractors":
        from sentsweep.distractor_data import main as build_distractors  # lazy: ray, torch

        return build_distractors(rest, prog="sentsweep build-distractors")
    if command == "cache":
        from sentsweep.preparation_cache.maintenance import main as cache  # lazy: ray, torch

        return cache(rest, prog="sentsweep cache")
    if command == "list":
        parser = argparse.ArgumentParser(prog="sentsweep list",
                                         description=COMMANDS["list"] + ": " + LIST_DESCRIPTION)
        parser.add_argument("--coverage", action="store_true", help=COVERAGE_HELP)
        if parser.parse_args(rest).coverage:
            print_coverage()
        else:
            print_experiments()
        return 0
    return run_command(rest)


LIST_DESCRIPTION = ("one line each: its name, in brackets the seed document whose tables it re-runs (or [project], "
                    "the project's own), and what it runs; a key to the brackets follows the list")


def print_experiments() -> None:
    """`sentsweep list`: one line per experiment, then what its source codes stand for. On a terminal the lines are
    wrapped to its width; into a pipe each experiment stays on one line (for grep; `sentsweep.terminal`)."""
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: ray, torch

    width = terminal_columns()
    definitions = {name: get_experiment(name) for name in experiment_names()}
    sources = {}
    for definition in definitions.values():
        reference = definition.reference
        sources[reference.label if reference else PROJECT_SOURCE] = str(reference) if reference else PROJECT_SOURCE_LINE
    names = max(map(len, definitions)) + 2
    codes = max(len(f"[{source}]") for source in sources) + 2
    for name, definition in definitions.items():
        source = definition.reference.label if definition.reference else PROJECT_SOURCE
        line = f"{name:{names}}{f'[{source}]':{codes}}{definition.description}"
        print(wrap_paragraph(line, width, subsequent=" " * (names + codes)) if width else line)
    print("\nSources:")
    for source in sorted(sources, key=_source_order):
        line = f"{f'[{source}]':{codes}}{sources[source]}"
        print(wrap_paragraph(line, width, subsequent=" " * codes) if width else line)
    usage = ("Run one: `python sweeps/NAME.py` or `sentsweep run NAME` (--dry-run: its protocol card, every value "
             "with its source; --help: its options).")
    print("\n" + (wrap_paragraph(usage, width) if width else usage))


COVERAGE_HELP = ("every result table and figure of the source documents instead: the sweeps that re-run it, its "
                 "reproduction targets, or why none can; the counts at the end")


def print_coverage() -> None:
    """`sentsweep list --coverage`: `sentsweep.experiments.coverage`'s listing."""
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: ray, torch
    from sentsweep.experiments.coverage import coverage, coverage_lines  # lazy: ray, torch

    for line in coverage_lines(coverage({name: get_experiment(name) for name in experiment_names()})):
        print(line)


PROJECT_SOURCE = "project"


def _source_order(label: str) -> tuple:
    """The key's order: the source documents as `SOURCE_DOCUMENTS` lists them, other works by name, the project's
    own last."""
    documents = [reference.label for reference in SOURCE_DOCUMENTS]
    return (label == PROJECT_SOURCE, label not in documents, documents.index(label) if label in documents else 0,
            label)
PROJECT_SOURCE_LINE = "the project's own experiment: it re-runs no table of a seed document"


def run_command(rest: list[str]) -> int:
    """`sentsweep run NAME [options]` (NAME an experiment, or a sweep file of one's own)."""
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: ray, torch

    if not rest or rest[0].startswith("-"):
        parser = argparse.ArgumentParser(
            prog="sentsweep run", usage="sentsweep run NAME [options]",
            description="run an experiment by name (or a sweep file of your own: sentsweep run my_sweep.py); "
                        "NAME is one of: " + ", ".join(experiment_names()),
            epilog="each experiment's options: sentsweep run NAME --help")
        parser.add_argument("name", metavar="NAME")
        parser.parse_args(rest)  # --help: the help, exit 0; no NAME or an unknown option: the usage, exit 2
    from sentsweep.sweep import run_sweep  # lazy: ray, torch

    try:
        definition = sweep_of_file(rest[0]) if rest[0].endswith(".py") else get_experiment(rest[0])
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return run_sweep(definition, rest[1:], prog=f"sentsweep run {rest[0]}")


def sweep_of_file(path: str):
    """The `SweepDefinition` a sweep file of one's own declares (imported as a module, see sentsweep.plugins)."""
    from sentsweep.plugins import load_user_file  # lazy: ray, torch
    from sentsweep.sweep import SweepDefinition  # lazy: ray, torch

    module = load_user_file(path)
    definitions = [value for value in vars(module).values() if isinstance(value, SweepDefinition)]
    if len(definitions) != 1:
        raise InputError(f"{path} declares {len(definitions)} SweepDefinition(s) at module level; "
                         "`sentsweep run FILE` needs exactly one")
    return definitions[0]


if __name__ == "__main__":
    sys.exit(main())
