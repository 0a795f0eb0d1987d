"""The fault matrix's `trial` point as a Ray Tune callback: a stage's trial finished (see `sentsweep.faults`).

Added to a stage's Ray Tune run only when `SENTSWEEP_FAULT` is set; Ray Tune pickles it with the run's state,
and a restored copy reads the variable again when called, so a resume without it runs undisturbed.
"""

from __future__ import annotations

from ray.tune import Callback

from sentsweep.faults import fault_point


class TrialFaultPoint(Callback):
    """Passes the `trial` fault point of stage `stage` each time one of its trials completes."""

    def __init__(self, stage: int) -> None:
        self.stage = stage

    def on_trial_complete(self, iteration, trials, trial, **info):
        fault_point("trial", self.stage)
