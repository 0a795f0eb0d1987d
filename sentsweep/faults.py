"""Deterministic fault injection for the fault matrix (`tests/sweep/test_fault_matrix.py`, `make fault-matrix`): the
sweep's driver stops itself, or stops its MLflow server, at a named point where its state changes, as a Ctrl-C, a
`kill -9` or a server going away there would.

Test-only: nothing happens unless the environment variable `SENTSWEEP_FAULT` is set, as
`<point>:<stage index>:<fault>[:<count>]` with a point of `POINTS` and a fault of `FAULTS`:

    SENTSWEEP_FAULT=trial:1:INT      # Ctrl-C when stage 2's first trial has finished
    SENTSWEEP_FAULT=model:0:KILL:2   # kill -9 once stage 1's second model is logged

Each point and fault, and how the MLflow server is stopped and started: docs/fault_tolerance.md, "The fault points
and faults"."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter

FAULT_ENV = "SENTSWEEP_FAULT"
MLFLOW_STOP_ENV = "SENTSWEEP_FAULT_MLFLOW_STOP"
MLFLOW_START_ENV = "SENTSWEEP_FAULT_MLFLOW_START"
POINTS = ("trial", "table", "model", "stage", "ray", "exit", "checkpoint")
FOLDER_ENV = "SENTSWEEP_FAULT_FOLDER"
SIGNALS = {"INT": signal.SIGINT, "KILL": signal.SIGKILL, "TERM": signal.SIGTERM}
OUTAGES = ("BLINK", "OUTAGE", "CRASH")
STORAGE_FAULTS = ("ENOSPC", "GONE")
FAULTS = tuple(SIGNALS) + OUTAGES + STORAGE_FAULTS

_reached: Counter = Counter()
_at_first_wait: list[str] = []  # what a BLINK or CRASH does when the driver first waits for MLflow


def parse_fault(spec: str) -> tuple[str, int, str, int]:
    """(point, stage, fault, count) of a `SENTSWEEP_FAULT` value; ValueError naming what is wrong."""
    parts = spec.split(":")
    if len(parts) not in (3, 4) or parts[0] not in POINTS or parts[2] not in FAULTS:
        raise ValueError(f"{FAULT_ENV}={spec!r}: expected <{'|'.join(POINTS)}>:<stage>:<{'|'.join(FAULTS)}>"
                         "[:<count>]")
    return parts[0], int(parts[1]), parts[2], int(parts[3]) if len(parts) == 4 else 1


def fault_point(point: str, stage: int, folder: str | None = None) -> None:
    """The driver (a trial, at `checkpoint`) reached `point` of stage `stage` (0-based), writing to `folder`: stop
    it, or its MLflow server, or fail its storage there if `SENTSWEEP_FAULT` says so."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    wanted, wanted_stage, fault, count = parse_fault(spec)
    if (point, stage) != (wanted, wanted_stage):
        return
    _reached[point, stage] += 1
    if _reached[point, stage] != count:
        return
    print(f"[{FAULT_ENV}] {SIGNALS[fault].name if fault in SIGNALS else fault} at {point} of stage {stage}", flush=True)
    if fault == "ENOSPC":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), folder)
    if fault == "GONE":  # (again while Ray Tune writes in it meanwhile: "Directory not empty")
        while os.path.exists(os.environ[FOLDER_ENV]):
            shutil.rmtree(os.environ[FOLDER_ENV], ignore_errors=True)
        return
    if fault == "TERM":
        (_when_a_child_starts if point == "ray" else lambda act: act())(lambda: os.kill(os.getpid(), signal.SIGTERM))
        return
    if fault in SIGNALS:
        _signal_driver(SIGNALS[fault])
        return
    _run_command(MLFLOW_STOP_ENV)
    if fault != "OUTAGE":
        _at_first_wait.append(fault)


def waiting_for_mlflow() -> None:
    """The driver is about to wait for an MLflow store it cannot reach: a BLINK's server comes back now, a CRASH's
    driver is killed now."""
    if not _at_first_wait:
        return
    fault = _at_first_wait.pop()
    print(f"[{FAULT_ENV}] {fault}: the driver waits for MLflow", flush=True)
    if fault == "BLINK":
        _run_command(MLFLOW_START_ENV)
    else:
        _signal_driver(signal.SIGKILL)


def _signal_driver(signum: signal.Signals) -> None:
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signum)
    else:
        os.kill(os.getpid(), signum)


def _when_a_child_starts(act) -> None:
    """`act()` from a thread of its own once this process has a child it did not have now."""
    import psutil  # lazy: psutil

    before = {child.pid for child in psutil.Process().children()}

    def watch() -> None:
        while not {child.pid for child in psutil.Process().children()} - before:
            time.sleep(0.01)
        act()

    threading.Thread(target=watch, daemon=True).start()


def _run_command(variable: str) -> None:
    command = os.environ.get(variable)
    if not command:
        raise RuntimeError(f"{FAULT_ENV}={os.environ[FAULT_ENV]} needs the command {variable}")
    subprocess.run(command, shell=True, check=True)
