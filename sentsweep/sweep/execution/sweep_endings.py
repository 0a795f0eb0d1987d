"""How a sweep that did not finish ends: its exit code, its runs' state, and the one message with the command that
continues it, for each way a sweep stops (`stopped_sweep_exit_code`).

| stopped by | exit code | its MLflow runs |
|---|---|---|
| MLflow unreachable past `--mlflow-wait` | 3 (`MLFLOW_UNAVAILABLE_EXIT_CODE`) | as they were; writes pending |
| a full disk, a folder removed (`StorageFault`) | 3 | trials KILLED; the unfinished points named |
| a stage whose results cannot be used (`StageFailed`) | its own (1) | the sweep's run FAILED |
| `--pending-timeout`, `--time-budget`, `--gpu-hours` | 1 | KILLED |
| Ctrl-C, SIGTERM (`Interrupted`) | 130 (`INTERRUPTED_EXIT_CODE`) | KILLED |
| anything else (a bug) | the exception goes on | the sweep's run FAILED |
"""

from __future__ import annotations

import shlex
import sys

from sentsweep.sweep.compute.cluster import PendingTimeout
from sentsweep.sweep.execution.budget import BudgetSpent
from sentsweep.sweep.execution.library_call import library_call
from sentsweep.sweep.execution.storage_faults import StorageFault, stop_for_storage, storage_fault
from sentsweep.tracking.store import redact
from sentsweep.tracking.writer import MlflowUnavailable

INTERRUPTED_EXIT_CODE = 130  # the shell's code for a process ended by SIGINT
MLFLOW_UNAVAILABLE_EXIT_CODE = 3  # MLflow stayed unreachable past --mlflow-wait; --resume finishes the sweep


def end_stopped(tracker) -> tuple[list[str], str]:
    """End a stopped sweep's runs KILLED (`SweepTracker.end_interrupted`); (the trials stopped, what became of the
    runs in words: ended KILLED, or left as they were while MLflow cannot be reached, the writes kept)."""
    try:
        return tracker.end_interrupted(), "their MLflow runs and the sweep's ended KILLED"
    except MlflowUnavailable as outage:
        return [], f"their MLflow runs and the sweep's are left as they were: {outage}"


class Interrupted(Exception):
    """Ray Tune stopped the stage's trials on Ctrl-C or SIGTERM and saved its state for --resume."""


def resume_command(extend: bool) -> str:
    """The command line that continues this sweep: the one that started it, with --resume; for an --extend run,
    the same command line (--extend reopens the sweep and skips what finished; it refuses --resume). A tracking
    URI's password is shown as *** (`redact`): put it back, or give it as MLFLOW_TRACKING_PASSWORD."""
    argv = sweep_command()
    return redact(shlex.join(argv + ([] if "--resume" in argv or extend else ["--resume"])))


def sweep_command() -> list[str]:
    """The command line that started this sweep (of a `sentsweep.run` call: the command line of the same sweep)."""
    call = library_call()
    if call is not None:
        return list(call.command)
    return [sys.executable, *sys.argv] if sys.argv[0].endswith(".py") else list(sys.argv)


class StageFailed(Exception):
    """A stage whose results cannot be used: nothing finished, no model to start from (`exit_code`)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def stopped_sweep_exit_code(error: BaseException, tracker, resume: str, folders) -> int | None:
    """The exit code of a sweep stopped by `error` (see the module docstring), once its runs are ended and its
    message printed with `resume`, the command that continues it; None for an error that is a bug (its run ended
    FAILED, the message printed): the caller raises it on. `folders`: the sweep's folders, where a full disk or a
    removed folder met by the driver itself is told apart from a bug (`storage_fault`)."""
    if isinstance(error, MlflowUnavailable):  # past --mlflow-wait: stopped where it was, every write kept
        print(f"\nerror: {error}; once MLflow is back, finish the sweep with: {resume}", file=sys.stderr)
        return MLFLOW_UNAVAILABLE_EXIT_CODE
    if isinstance(error, StageFailed):
        tracker.end_failed(str(error))  # the sweep's run says how it ended, and why (tag failure_reason)
        print(f"error: {error}\nthe sweep's MLflow run {tracker.parent_run_id} ended FAILED", file=sys.stderr)
        return error.exit_code
    if isinstance(error, PendingTimeout):  # ended as an interruption is: what finished is written, resumable
        _, ended = end_stopped(tracker)
        print(f"error: {error}\n{ended}\nresume once the cluster can run the trials:\n  {resume}", file=sys.stderr)
        return 1
    if isinstance(error, BudgetSpent):  # ended as --pending-timeout ends it
        _, ended = end_stopped(tracker)
        print(f"error: {error}\n{ended}\nresume with:\n  {resume}", file=sys.stderr)
        return 1
    if isinstance(error, StorageFault):  # a full disk, a folder removed: stopped as an outage stops it
        return stop_for_storage(tracker, error, end_stopped, resume)
    if isinstance(error, (Interrupted, KeyboardInterrupt)):
        stopped, ended = end_stopped(tracker)
        print(f"\ninterrupted: {len(stopped)} trial(s) stopped; {ended}" + "".join(f"\n  {trial}" for trial in stopped)
              + f"\nresume with:\n  {resume}", file=sys.stderr)
        return INTERRUPTED_EXIT_CODE
    if not isinstance(error, Exception):
        return None
    fault = storage_fault(error, folders)
    if fault is not None:  # met by the driver itself: Ray Tune saving its state on a full disk, say
        return stop_for_storage(tracker, StorageFault(fault), end_stopped, resume)
    try:  # a bug or a lost store: the sweep's run must not stay RUNNING
        tracker.end_failed(f"{type(error).__name__}: {error}")
        ended = "its MLflow run ended FAILED"
    except MlflowUnavailable as outage:
        ended = f"its MLflow run could not be ended ({outage})"
    print(f"\nthe sweep failed ({type(error).__name__}: {error}); {ended}. What finished is kept; once the cause is "
          f"fixed, resume with:\n  {resume}", file=sys.stderr)
    return None
