"""Where a training loop reports metrics and checkpoints: Ray Tune inside a sweep, or memory for a direct run.

A report to Ray Tune also carries the trial process's machine usage since the previous report
(`system_metrics`) and the trial's compute so far (`compute`: CPU, GPU and wall seconds over all its attempts),
which the driver logs to the trial's MLflow run with its other metrics; the first report of each attempt also
carries the environment the trial runs in (`environment`: its node, devices, Python and packages), which the
driver makes the run's provenance tags.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
import weakref
from pathlib import Path

from sentsweep.faults import fault_point
from sentsweep.trainables.compute import ComputeMeter, read_compute, write_compute
from sentsweep.trainables.environment import ENVIRONMENT_KEY, trial_environment
from sentsweep.trainables.system_metrics import process_sampler

# What else a report may carry, for the driver to log (sentsweep.tracking.callback): settings only the trial knows,
# {key: value}, as MLflow params (what a trainer script's trainer really used); metrics logged at steps of their
# own, [(key, value, step)] (a trainer's own loss, logged every few steps between two evaluations).
REPORTED_PARAMS_KEY = "reported_params"
STEP_METRICS_KEY = "metrics_by_step"


def trial_gpu_fraction() -> float:
    """The GPUs (a fraction, or whole ones) Ray Tune gave this trial: its request, as the runner made it."""
    from ray import tune

    return float(tune.get_context().get_trial_resources().required_resources.get("GPU", 0.0))


def current_trial_id() -> str | None:
    """The Ray Tune trial this process runs (its trial id), None outside one."""
    try:
        from ray import tune

        with warnings.catch_warnings():  # Ray's note that there is no trial outside one
            warnings.simplefilter("ignore", UserWarning)
            return tune.get_context().get_trial_id()
    except Exception:  # noqa: BLE001 - no Ray, or no trial context: a trial run directly
        return None


def use_the_threads_ray_gave() -> None:
    """PyTorch's thread count as `OMP_NUM_THREADS` says (Ray sets it to the trial's CPUs before the trial starts).

    A process that imports PyTorch after Ray set it gets that count from OpenMP; a worker forked from a process that
    had imported PyTorch before (`sentsweep.worker_fork`) would keep OpenMP's count from then, all the node's cores,
    and the trials sharing a node would each run as many threads as it has cores."""
    import torch

    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))


class TuneSession:
    """Reports to Ray Tune (`tune.report`), with the `system/...` usage metrics since the last report and the
    trial's compute (its checkpoints keep it), and resumes from Tune's latest checkpoint of this trial."""

    def __init__(self) -> None:
        use_the_threads_ray_gave()
        self._system_metrics = process_sampler()
        self._system_metrics.new_window()  # a process running trials one after another: this trial's usage only
        self._compute = ComputeMeter(trial_gpu_fraction())
        self._environment_reported = False

    def latest_checkpoint_dir(self):
        from ray import tune

        checkpoint = tune.get_checkpoint()
        if checkpoint is None:
            return None
        directory = checkpoint.to_directory()
        self._compute.resume(read_compute(directory))  # what the trial's earlier attempts spent
        return directory

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        from ray import tune

        fault_point("checkpoint", 0, tune.get_context().get_trial_dir())  # the fault matrix's full disk
        compute = self._compute.total()
        write_compute(checkpoint_dir, compute)
        checkpoint = tune.Checkpoint.from_directory(str(checkpoint_dir))
        # as JSON text: one entry in Ray Tune's result files, not a column per package
        environment = {} if self._environment_reported else {ENVIRONMENT_KEY: json.dumps(trial_environment())}
        self._environment_reported = True
        tune.report(metrics | self._system_metrics.take() | compute.as_metrics() | environment, checkpoint=checkpoint)


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
