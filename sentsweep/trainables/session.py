"""Where a training loop reports metrics and checkpoints: Ray Tune inside a sweep, or memory for a direct run."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


class TuneSession:
    """Reports to Ray Tune (`tune.report`) and resumes from Tune's latest checkpoint of this trial."""

    def latest_checkpoint_dir(self):
        from ray import tune

        checkpoint = tune.get_checkpoint()
        if checkpoint is None:
            return None
        return checkpoint.to_directory()

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        from ray import tune

        tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(str(checkpoint_dir)))


class LocalSession:
    """Keeps reports in `self.reports` and the last checkpoint in its own folder: a trial run without Ray."""

    def __init__(self, resume_from: str | Path | None = None) -> None:
        self.reports: list[dict] = []
        self.checkpoint_dir = Path(tempfile.mkdtemp(prefix="sentsweep-checkpoint-"))
        self._resume_from = resume_from

    def latest_checkpoint_dir(self):
        return self._resume_from

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        self.reports.append(dict(metrics))
        shutil.rmtree(self.checkpoint_dir, ignore_errors=True)
        shutil.copytree(checkpoint_dir, self.checkpoint_dir)
