"""`sentsweep rerun RUN_ID`: a sweep started again from its run's record, into a new sweep run linked to the old one.

The sweep's run records the command that started it (`sentsweep.tracking.command_record`: the options it parsed,
how it was started, the experiment, the working folder) and the provenance of its driver (commit, dirty flag,
locked packages: `sentsweep.tracking.provenance`). `rerun`:

1. reads the run from the store (one that cannot be reached, a run that is not there, or one with no recorded
   command, is an `InputError` before anything runs);
2. says, one line each, where the commit, the dirty flag or a locked package of this environment differs from the
   run's record;
3. starts the same experiment with the same options from the same working folder (the store given to `rerun`
   replacing the recorded `--tracking-uri`, whose credentials the record left out), its new sweep run tagged
   `sentsweep.rerun_of` with the old run's id;
4. compares the new run's tables with the old ones (`sentsweep.analysis.rerun_comparison`): the same
   configurations, and whether any cell differs significantly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.tracking.command_record import COMMAND_TAG, RERUN_OF_TAG, RERUN_OF_VARIABLE, provenance_differences
from sentsweep.tracking.store import check_tracking_reachable, redact, resolve_tracking_uri


@dataclass
class RerunResult:
    """What a re-run gives: its exit code, its sweep run (None where none started), the provenance lines and the
    comparison of each stage's table (`StageComparison`).

    Examples:
        >>> again = sentsweep.rerun("<sweep run id>", tracking_uri="sqlite:////tmp/s/mlflow.db")  # doctest: +SKIP
        >>> again.exit_code, again.differences, [c.stage for c in again.comparisons]  # doctest: +SKIP
        (0, [], ['deletion_ratio x pooling'])
    """

    exit_code: int
    old_run_id: str
    new_run_id: str | None = None
    differences: list[str] = field(default_factory=list)
    comparisons: list = field(default_factory=list)


def recorded_run(tracking_uri: str, run_id: str):
    """The sweep run `run_id` and its recorded command; an `InputError` where the store cannot be reached, the run
    is not in it, or the run is no sweep's run with a recorded command."""
    from mlflow.exceptions import MlflowException  # lazy: mlflow
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    if tracking_uri.startswith("sqlite:///") and not Path(tracking_uri.removeprefix("sqlite:///")).exists():
        raise InputError(f"no MLflow store at {tracking_uri}")
    check_tracking_reachable(tracking_uri)
    try:
        run = MlflowClient(tracking_uri).get_run(run_id)
    except MlflowException:
        raise InputError(f"run {run_id!r}: no such run at {redact(tracking_uri)}") from None
    if COMMAND_TAG not in run.data.tags:
        raise InputError(f"run {run_id!r} is not a sweep's run: it has no recorded command (tag {COMMAND_TAG})")
    return run, json.loads(run.data.tags[COMMAND_TAG])


def current_provenance() -> dict[str, str]:
    """This environment's provenance tags, as the sweep's run records its driver's."""
    from sentsweep.tracking.provenance import provenance_tags  # lazy: torch
    from sentsweep.trainables.environment import trial_environment  # lazy: torch

    return provenance_tags(trial_environment())


def with_tracking_uri(argv: list[str], tracking_uri: str) -> list[str]:
    """`argv` with its --tracking-uri (either spelling) replaced by `tracking_uri`, or it added."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--tracking-uri":
            skip = True
        elif not arg.startswith("--tracking-uri="):
            out.append(arg)
    return [*out, "--tracking-uri", tracking_uri]


def definition_of(command: dict):
    """The sweep definition the command ran: the experiment of that name, else the sweep file it ran."""
    from sentsweep.experiments import experiment_names, get_experiment  # lazy: torch
    from sentsweep.plugins import load_user_file  # lazy: torch
    from sentsweep.sweep import SweepDefinition  # lazy: torch

    if command["experiment"] in experiment_names():
        return get_experiment(command["experiment"])
    if command.get("script") and Path(command["script"]).exists():
        module = load_user_file(command["script"])
        for value in vars(module).values():
            if isinstance(value, SweepDefinition) and value.name == command["experiment"]:
                return value
    raise InputError(f"experiment {command['experiment']!r} of the run: no such experiment, and its sweep file "
                     f"{command.get('script') or '(none recorded)'} is not there")


@contextlib.contextmanager
def _in_folder_as_rerun_of(folder: str, run_id: str):
    previous, before = os.getcwd(), os.environ.get(RERUN_OF_VARIABLE)
    os.chdir(folder)
    os.environ[RERUN_OF_VARIABLE] = run_id
    try:
        yield
    finally:
        os.chdir(previous)
        if before is None:
            os.environ.pop(RERUN_OF_VARIABLE, None)
        else:
            os.environ[RERUN_OF_VARIABLE] = before


def new_sweep_run(tracking_uri: str, experiment_id: str, old_run_id: str) -> str | None:
    """The newest sweep run tagged as a re-run of `old_run_id`."""
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    runs = MlflowClient(tracking_uri).search_runs([experiment_id], f"tags.`{RERUN_OF_TAG}` = '{old_run_id}'",
                                                  order_by=["attributes.start_time DESC"], max_results=1)
    return runs[0].info.run_id if runs else None


def rerun(run_id: str, tracking_uri: str | None = None, echo=print) -> RerunResult:
    """Start the sweep of run `run_id` again and compare (see the module docstring); `echo` gets each line said.
    Bad input is an `InputError`, raised before anything runs.

    Examples:
        >>> again = sentsweep.rerun("<sweep run id>", tracking_uri="sqlite:////tmp/s/mlflow.db")  # doctest: +SKIP
        re-running sentsweep run tsdae_deletion --quick --ratios 0.6 ... in /tmp/s
        >>> sentsweep.rerun("<sweep run id>", tracking_uri="sqlite:///no-store.db")
        Traceback (most recent call last):
        sentsweep.errors.InputError: no MLflow store at sqlite:///no-store.db
    """
    uri = resolve_tracking_uri(tracking_uri)
    run, command = recorded_run(uri, run_id)
    if not Path(command["cwd"]).is_dir():
        raise InputError(f"the run's working folder {command['cwd']} is not there")
    definition = definition_of(command)
    result = RerunResult(exit_code=0, old_run_id=run_id)
    result.differences = provenance_differences(run.data.tags, current_provenance())
    for line in result.differences:
        echo(line)
    from sentsweep.sweep import run_sweep  # lazy: ray, torch

    argv = with_tracking_uri(command["options_argv"], uri)
    echo(f"re-running {command['entry_point']} {' '.join(command['options_argv'])} in {command['cwd']}")
    with _in_folder_as_rerun_of(command["cwd"], run_id):
        result.exit_code = run_sweep(definition, argv, prog=command["entry_point"])
    result.new_run_id = new_sweep_run(uri, run.info.experiment_id, run_id)
    if result.exit_code != 0 or result.new_run_id is None:
        return result
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    from sentsweep.analysis.rerun_comparison import compare_sweeps  # lazy: mlflow

    experiment = MlflowClient(uri).get_experiment(run.info.experiment_id).name
    alpha, correction = float(run.data.params.get("alpha", 0.05)), run.data.params.get("correction", "holm")
    result.comparisons = compare_sweeps(uri, experiment, run_id, result.new_run_id, alpha, correction)
    echo(f"new sweep run {result.new_run_id} (tag {RERUN_OF_TAG} = {run_id}) against the old one:")
    for comparison in result.comparisons:
        echo("  " + comparison.line(alpha, correction))
    return result


def main(argv: list[str], prog: str = "sentsweep rerun") -> int:
    """`sentsweep rerun RUN_ID [--tracking-uri URI]`; returns the exit code (2: bad input, in one line)."""
    parser = argparse.ArgumentParser(prog=prog, description="start a sweep again from its MLflow run's record, "
                                     "into a new sweep run linked to the old one, and compare their tables")
    parser.add_argument("run_id", metavar="RUN_ID", help="the sweep's run (its id in MLflow)")
    parser.add_argument("--tracking-uri", help="the MLflow store the run is in (default: MLFLOW_TRACKING_URI or "
                        "./mlflow.db)")
    args = parser.parse_args(argv)
    try:
        return rerun(args.run_id, args.tracking_uri).exit_code
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
