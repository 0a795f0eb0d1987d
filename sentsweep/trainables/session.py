"""Where a training loop reports metrics and checkpoints: Ray Tune inside a sweep, or memory for a direct run.

A report to Ray Tune also carries the trial process's machine usage since the previous report
(`system_metrics`), which the driver logs to the trial's MLflow run with its other metrics.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

from sentsweep.trainables.system_metrics import process_sampler


class TuneSession:
    """Reports to Ray Tune (`tune.report`), with the `system/...` usage metrics since the last report, and
    resumes from Tune's latest checkpoint of this trial."""

    def __init__(self) -> None:
        self._system_metrics = process_sampler()
        self._system_metrics.new_window()  # a process running trials one after another: this trial's usage only

    def latest_checkpoint_dir(self):
        from ray import tune

        checkpoint = tune.get_checkpoint()
        if checkpoint is None:
            return None
        return checkpoint.to_directory()

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        from ray import tune

        checkpoint = tune.Checkpoint.from_directory(str(checkpoint_dir))
        tune.report(metrics | self._system_metrics.take(), checkpoint=checkpoint)


class LocalSession:
    """Keeps reports in `self.reports` and the last checkpoint in its own temporary folder: a trial run without
    Ray. The folder is removed with the session (when it is garbage collected, or at the latest when Python exits)."""

    def __init__(self, resume_from: str | Path | None = None) -> None:
        self.reports: list[dict] = []
        self.checkpoint_dir = Path(tempfile.mkdtemp(prefix="sentsweep-checkpoint-"))
        weakref.finalize(self, shutil.rmtree, self.checkpoint_dir, ignore_errors=True)
        self._resume_from = resume_from

    def latest_checkpoint_dir(self):
        return self._resume_from

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        self.reports.append(dict(metrics))
        shutil.rmtree(self.checkpoint_dir, ignore_errors=True)
        shutil.copytree(checkpoint_dir, self.checkpoint_dir)
