"""A sweep started from Python (`sentsweep.run`) rather than a command line: what the driver takes from the call.

While `called_from_python(call)` holds, the runner sends each stage's progress to `call.progress_stream` (the
terminal the call's output would reach, the caller's own output being captured), names the sweep's MLflow run in
`call.sweep_run_id` as soon as it opens it, and a stopped sweep's resume line is `call.command` (the shell command
that continues the same sweep) instead of the interpreter's own command line (a notebook kernel's). Outside such a
call, `library_call()` is None and nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TextIO


@dataclass
class LibraryCall:
    """One `sentsweep.run` call as the driver sees it: where the progress goes, the command line of the same sweep,
    and the sweep's MLflow run once opened (`sweep_run_id`, `experiment_id`)."""

    progress_stream: TextIO | None
    command: list[str]
    sweep_run_id: str | None = None
    experiment_id: str | None = None


_CALL: ContextVar[LibraryCall | None] = ContextVar("sentsweep_library_call", default=None)


def library_call() -> LibraryCall | None:
    """The `sentsweep.run` call the driver runs in, or None (a command line)."""
    return _CALL.get()


@contextmanager
def called_from_python(call: LibraryCall) -> Iterator[LibraryCall]:
    """Run the sweep started within as `call` (see the module docstring)."""
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)


def note_sweep_run(sweep_run_id: str, experiment_id: str) -> None:
    """The sweep's MLflow run, opened (or reopened by --resume or --extend), noted for the call that started it."""
    call = _CALL.get()
    if call is not None:
        call.sweep_run_id, call.experiment_id = sweep_run_id, experiment_id
