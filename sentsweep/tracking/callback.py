"""MLflow tracking of a sweep: one parent run per sweep, one child run per trial, logged from the driver.

The driver-side Ray Tune callback means trials need no route to the tracking server, a retried trial keeps
its one run (looked up by its Ray trial id), and SQLite sees a single writer.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

from ray.tune import Callback
from ray.tune.result import AUTO_RESULT_KEYS

from sentsweep.random_seeds import TRIAL_INDEX_KEY, resolve_seed
from sentsweep.tracking.store import PER_QUERY_ARTIFACT
from sentsweep.tracking.writer import QueuedMlflowWriter
from sentsweep.version import code_version

IGNORED_RESULT_KEYS = set(AUTO_RESULT_KEYS) | {"done", "trial_id", "experiment_tag", "should_checkpoint"}
# Config entries that are bookkeeping, not hyperparameters.
NON_PARAM_KEYS = {TRIAL_INDEX_KEY, "seeds"}


def config_hash(config: dict) -> str:
    """Hash of a trial's hyperparameters without its seed: the trials of one config over seeds share it."""
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS | {"seed"}}
    return hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]


def trial_params(config: dict) -> dict:
    """The config entries logged as MLflow params (the seed included)."""
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS}
    params["seed"] = resolve_seed(config)
    return params


def selection_tag(config: dict) -> str:
    """Which split chose the checkpoint the trial's final scores belong to."""
    if config.get("select_checkpoint") == "last":
        return "none (the last checkpoint after a fixed number of steps)"
    if config.get("select_checkpoint") == "best_task_dev":
        task = config.get("selection_task")
        return f"best_task_dev (the dev split of task {task}, {(config.get('eval_tasks') or {}).get(task)})"
    if config.get("select_checkpoint") == "validation_loss":
        return (f"validation_loss (the method's loss on {config.get('validation_size', 1000)} corpus sentences "
                "held out of training)")
    return f"best_sts_dev ({config.get('eval_format', 'stsb')} dev split of {config.get('dev_file')})"


class SweepTracker(Callback):
    """Ray Tune callback: a parent MLflow run for the sweep and exactly one child run per trial.

    With `resume`, the latest unfinished parent run of this sweep is reused, and a trial that already has
    a run (found by its Ray trial id) keeps logging to it, so a resumed sweep has no duplicate runs. Writes
    go through a `QueuedMlflowWriter`, so a tracking server lost mid-sweep loses no result.
    """

    def __init__(self, tracking_uri: str, experiment_name: str, sweep_name: str, pending_dir: str | Path,
                 resume: bool = False) -> None:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=tracking_uri)
        self.sweep_name = sweep_name
        experiment = client.get_experiment_by_name(experiment_name)
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(experiment_name)
        self.version = code_version()
        unfinished = client.search_runs(
            [experiment_id],
            f"tags.role = 'sweep' and tags.sweep = '{sweep_name}' and attributes.status = 'RUNNING'",
            order_by=["attributes.start_time DESC"],
            max_results=1,
        ) if resume else []
        if unfinished:
            self.parent_run_id = unfinished[0].info.run_id
        else:
            self.parent_run_id = client.create_run(
                experiment_id,
                run_name=f"{sweep_name}-{time.strftime('%Y%m%d-%H%M%S')}",
                tags={"sweep": sweep_name, "code_version": self.version, "role": "sweep"},
            ).info.run_id
        self.writer = QueuedMlflowWriter(
            tracking_uri, experiment_id, self.parent_run_id,
            Path(pending_dir) / f"mlflow-pending-{self.parent_run_id[:8]}.jsonl",
        )

    def log_sweep_metrics(self, metrics: dict) -> None:
        """Metrics of the sweep as a whole (for example the untrained baseline), on the parent run."""
        for key, value in metrics.items():
            self.writer.client.log_metric(self.parent_run_id, key, value)

    def on_trial_start(self, iteration, trials, trial, **info):
        config = trial.config
        params = trial_params(config)
        self.writer.submit({
            "op": "create",
            "trial": trial.trial_id,
            "name": f"{config.get('method')}-{trial.trial_id}",
            "tags": {
                "mlflow.parentRunId": self.parent_run_id,
                "sweep": self.sweep_name,
                "sweep_run_id": self.parent_run_id,
                "method": str(config.get("method")),
                "seed": str(resolve_seed(config)),
                "config_hash": config_hash(config),
                "code_version": self.version,
                "ray_trial_id": trial.trial_id,
                "selected_on": selection_tag(config),
            },
            "params": {k: json.dumps(v) if isinstance(v, (list, dict)) else str(v) for k, v in params.items()},
            "config": json.loads(json.dumps(params, default=str)),
        })

    def on_trial_result(self, iteration, trials, trial, result, **info):
        step = int(result.get("step", result.get("training_iteration", 0)))
        now = int(time.time() * 1000)
        metrics = [
            (key, float(value), now, step)
            for key, value in result.items()
            if key not in IGNORED_RESULT_KEYS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
        ]
        self.writer.submit({"op": "metrics", "trial": trial.trial_id, "metrics": metrics})
        if result.get("per_query"):
            self.writer.submit({"op": "artifact", "trial": trial.trial_id, "file": PER_QUERY_ARTIFACT,
                                "content": result["per_query"]})
        for name, content in (result.get("artifacts") or {}).items():  # e.g. AugSBERT's silver_scores.json
            self.writer.submit({"op": "artifact", "trial": trial.trial_id, "file": name, "content": content})

    def on_trial_complete(self, iteration, trials, trial, **info):
        if _stopped_early(trial):
            self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": "stopped_early", "value": "true"})
            self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "KILLED"})
        else:
            self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "FINISHED"})

    def on_trial_error(self, iteration, trials, trial, **info):
        reason = _error_text(trial)
        self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": "failure_reason", "value": reason})
        self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "FAILED"})

    def finish(self, attempts: int = 6, wait_s: float = 5.0) -> bool:
        """Write what is still queued and mark the sweep's parent run finished; False if the store stayed away."""
        if not self.writer.flush(attempts=attempts, wait_s=wait_s):
            return False
        self.writer.client.set_terminated(self.parent_run_id, status="FINISHED")
        return True


def _error_text(trial) -> str:
    """The trial's traceback from the error file Ray Tune writes beside it (the last failure's tail)."""
    path = trial.error_file
    if path and Path(path).is_file():
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()[-5000:]
    return "trial raised an error (no error file)"


def _stopped_early(trial) -> bool:
    """A trial ended by a scheduler before its last step (ASHA, median stopping)."""
    result = trial.last_result
    return "step" in result and "total_steps" in result and result["step"] < result["total_steps"]
