"""Deterministic fault injection for the fault matrix (`tests/test_fault_matrix.py`, `make fault-matrix`): the
sweep's driver stops itself at a named point where its state changes, as a Ctrl-C or a `kill -9` there would.

Test-only: nothing happens unless the environment variable `SENTSWEEP_FAULT` is set, as

    SENTSWEEP_FAULT=<point>:<stage index>:<INT|KILL>[:<count>]

for example `trial:1:INT` (Ctrl-C when stage 2's first trial has finished) or `model:0:KILL:2` (`kill -9` once
stage 1's second model is logged). The points (`POINTS`) are passed in this order by a stage:

- `trial`: a trial of the stage finished (Ray Tune's callback, while the stage's other trials run);
- `table`: the stage's table is printed, not yet logged to MLflow, no model logged;
- `model`: a model of the stage is logged to MLflow, the others not yet;
- `stage`: the stage ended (table logged, models kept, checkpoints cleaned), the next not started (after the
  last stage: the sweep's run not yet ended).

The signal goes to the driver's process group when the driver leads it (as a terminal's Ctrl-C reaches a job, and
as the tests start drivers), else to the driver alone. `<count>`: the how-manieth time the point is reached in
that stage (default 1).
"""

from __future__ import annotations

import os
import signal
from collections import Counter

FAULT_ENV = "SENTSWEEP_FAULT"
POINTS = ("trial", "table", "model", "stage")
SIGNALS = {"INT": signal.SIGINT, "KILL": signal.SIGKILL}

_reached: Counter = Counter()


def parse_fault(spec: str) -> tuple[str, int, signal.Signals, int]:
    """(point, stage, signal, count) of a `SENTSWEEP_FAULT` value; ValueError naming what is wrong."""
    parts = spec.split(":")
    if len(parts) not in (3, 4) or parts[0] not in POINTS or parts[2] not in SIGNALS:
        raise ValueError(f"{FAULT_ENV}={spec!r}: expected <{'|'.join(POINTS)}>:<stage>:<INT|KILL>[:<count>]")
    return parts[0], int(parts[1]), SIGNALS[parts[2]], int(parts[3]) if len(parts) == 4 else 1


def fault_point(point: str, stage: int) -> None:
    """The driver reached `point` of stage `stage` (0-based): stop it there if `SENTSWEEP_FAULT` says so."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    wanted, wanted_stage, signum, count = parse_fault(spec)
    if (point, stage) != (wanted, wanted_stage):
        return
    _reached[point, stage] += 1
    if _reached[point, stage] != count:
        return
    print(f"[{FAULT_ENV}] {signum.name} at {point} of stage {stage}", flush=True)
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signum)
    else:
        os.kill(os.getpid(), signum)
