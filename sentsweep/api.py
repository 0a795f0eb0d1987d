"""`sentsweep.run`: a sweep started from Python, its result returned as an object.

    result = sentsweep.run("tsdae_deletion", quick=True, ratios=[0.6], poolings=["mean"], seeds=2, max_steps=4)
    result.tables["deletion_ratio x pooling"]   # one line per cell: mean, std, n, interval, p-value, group
    result.best.values, result.status.state

The options are the command line's, as keywords (`sentsweep.keyword_options`), checked as the command line checks
them; the sweep then starts where a script's starts (`sentsweep.sweep.launch.entry_point.start_sweep`), so that bad
input raises `InputError` before anything runs, as the command line ends in its one line and exit code 2. While it
runs, only its progress shows (a notebook's bar in a notebook, `sentsweep.sweep.execution.notebook_progress`); what
the command line would print (the tables, the links, how it ended) is kept in the result's `output`, and printed as
it comes with `verbose=True` (which also gives Ray Tune's own output, as --verbose does). The result is read back
from the sweep's MLflow record (`sentsweep.sweep_result`).
"""

from __future__ import annotations

import contextlib
import io
import shlex
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from sentsweep.errors import InputError
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.keyword_options import call_text, keyword_argv, keyword_options
from sentsweep.sweep import SweepDefinition
from sentsweep.sweep.execution.interrupts import ignore_signals_at_exit
from sentsweep.sweep.execution.library_call import LibraryCall, called_from_python
from sentsweep.sweep.launch.entry_point import start_sweep
from sentsweep.sweep_result import STATES, SweepResult, SweepStatus, read_sweep_result
from sentsweep.tracking.command_record import forget_command, note_command
from sentsweep.tracking.store import redact, resolve_tracking_uri, store_reachable

INTERRUPTED_EXIT_CODE = 130  # sentsweep.sweep.execution.sweep_endings: Ctrl-C or SIGTERM
ENDING_MARKERS = ("error: ", "interrupted: ", "the sweep failed")  # the first line of how a stopped sweep ended


def run(experiment: str | SweepDefinition, /, **options: Any) -> SweepResult:
    """Run a sweep and return its result.

    `experiment`: an experiment's name (`sentsweep.experiment_names()`) or a `SweepDefinition` of one's own.
    `options`: the command line's options as keywords, a flag's dashes as underscores (`max_steps=4` for
    `--max-steps 4`, `set={"temperature": 0.1}` for `--set temperature=0.1`); a switch takes True, an option of
    several values a list. Bad input (an unknown option, a value out of range, a missing data folder, an
    unreachable tracking store) raises `InputError` naming it, before anything runs; a Ctrl-C before the first trial
    raises KeyboardInterrupt (nothing to resume). A sweep stopped later returns, its `status` saying how and how to
    resume it. `verbose=True` prints what the command line prints (and Ray Tune's own output); otherwise only the
    progress shows, and the printed text is the result's `output`.

    Examples:
        >>> result = sentsweep.run("tsdae_deletion", quick=True, ratios=[0.6], poolings=["mean"], seeds=2,
        ...                        max_steps=4, eval_steps=2, tracking_uri="sqlite:////tmp/s/mlflow.db",
        ...                        output_dir="/tmp/s")  # doctest: +SKIP
        >>> result.status.state, result.best.values  # doctest: +SKIP
        ('finished', {'noise_ratio': 0.6, 'pooling': 'mean'})

        Bad input raises before anything runs:

        >>> sentsweep.run("tsdae_deletion", quick=True, ratios=[-1])
        Traceback (most recent call last):
        sentsweep.errors.InputError: setting noise_ratio=-1.0 is out of range: must be >= 0
    """
    definition, name_text = _definition(experiment)
    parsed = keyword_options(definition.options, options)
    argv = keyword_argv(definition.options, options)
    call = LibraryCall(progress_stream=sys.stderr, command=_shell_command(experiment, definition, argv))
    _note_command(call.command, argv, definition.name)
    output = io.StringIO()
    try:
        with called_from_python(call), _captured(output, echo=parsed.verbose):
            code = start_sweep(definition, parsed)
    finally:
        ignore_signals_at_exit()
    tracking_uri = resolve_tracking_uri(parsed.tracking_uri)
    status = _status(code, output.getvalue(), call, tracking_uri, name_text, options, parsed.extend)
    if call.sweep_run_id is None or not store_reachable(tracking_uri):
        return SweepResult(experiment=parsed.experiment or definition.name, sweep_run_id=call.sweep_run_id,
                           status=status, output=output.getvalue())
    return read_sweep_result(tracking_uri, call.sweep_run_id, status, output.getvalue())


def _definition(experiment: str | SweepDefinition) -> tuple[SweepDefinition, str]:
    """(the definition, the call's first argument as Python source)."""
    if isinstance(experiment, SweepDefinition):
        return experiment, "definition"
    if isinstance(experiment, str):
        return get_experiment(experiment), repr(experiment)
    raise InputError(f"experiment {experiment!r}: give an experiment's name or a SweepDefinition")


def _shell_command(experiment: str | SweepDefinition, definition: SweepDefinition, argv: list[str]) -> list[str] | None:
    """The command line that runs the same sweep (`sentsweep run NAME ...`); None for a definition of one's own,
    which no command names."""
    name = experiment if isinstance(experiment, str) else definition.name
    if name not in experiment_names() or get_experiment(name) is not definition:
        return None
    return ["sentsweep", "run", name, *argv]


def _note_command(command: list[str] | None, argv: list[str], name: str) -> None:
    """The sweep's run records `command` (the shell command of the same sweep) as a command line's sweep records
    its own, so that `sentsweep rerun` starts it again; none where no command names the sweep."""
    if command is None:
        forget_command()
    else:
        note_command(argv, " ".join(command[:3]), name, argv=command)


class _Tee(io.TextIOBase):
    """A stream that keeps what is written to it and, with `echo`, writes it on to `stream` as well."""

    def __init__(self, kept: io.StringIO, stream: TextIO, echo: bool) -> None:
        self.kept, self.stream, self.echo = kept, stream, echo

    def write(self, text: str) -> int:
        self.kept.write(text)
        if self.echo:
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        if self.echo:
            self.stream.flush()


@contextlib.contextmanager
def _captured(kept: io.StringIO, echo: bool) -> Iterator[None]:
    """Standard output and error kept in `kept` (and, with `echo`, printed as well) for the time of the sweep."""
    with contextlib.redirect_stdout(_Tee(kept, sys.stdout, echo)), \
            contextlib.redirect_stderr(_Tee(kept, sys.stderr, echo)):
        yield


def _status(code: int, output: str, call: LibraryCall, tracking_uri: str, name_text: str, options: dict,
            extend: bool) -> SweepStatus:
    """How the sweep ended (`SweepStatus`): by its exit code and, for a stop that is not an interruption, by its
    sweep run's MLflow status (KILLED: stopped resumably, as by a budget; FAILED: failed)."""
    if code == 0:
        return SweepStatus("finished", 0)
    state = "interrupted" if code == INTERRUPTED_EXIT_CODE else "failed"
    if state == "failed" and call.sweep_run_id is not None and store_reachable(tracking_uri):
        from mlflow.tracking import MlflowClient  # lazy: mlflow

        recorded = MlflowClient(tracking_uri=tracking_uri).get_run(call.sweep_run_id).info.status
        state = "interrupted" if STATES.get(recorded) == "interrupted" else "failed"
    resume = call_text(name_text, options if extend else options | {"resume": True})
    command = None if call.command is None else redact(shlex.join(
        call.command + ([] if extend or "--resume" in call.command else ["--resume"])))
    return SweepStatus(state, code, _ending(output), resume, command)


def _ending(output: str) -> str:
    """What the sweep printed as it stopped: from the last line that starts its ending (`ENDING_MARKERS`), else its
    last line."""
    lines = output.strip().splitlines()
    starts = [index for index, line in enumerate(lines) if line.startswith(ENDING_MARKERS)]
    return "\n".join(lines[starts[-1]:] if starts else lines[-1:]).strip()
