"""MLflow tracking of a sweep: one parent run per sweep, one child run per trial, logged from the driver.

The driver-side Ray Tune callback means trials need no route to the tracking server, a retried trial keeps
its one run (looked up by its Ray trial id), and SQLite sees a single writer.

The runs follow MLflow's conventions so its UI shows them as it would its own: the source tags (driver
script, git commit, user) on every run, an experiment of kind "custom_model_development" (the UI then opens
on its runs, not on GenAI traces), each trial's data files as dataset inputs with content digests
(`sentsweep.tracking.datasets`), the trial's `system/...` usage metrics as reported
(`sentsweep.trainables.system_metrics`), and the sweep's tables as the parent run's description. The
preparation cache entries a trial used are tags of its run (`cache_tags`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from pathlib import Path

from ray.tune import Callback
from ray.tune.result import AUTO_RESULT_KEYS

from sentsweep.plugins import USER_CODE_KEY
from sentsweep.preparation_cache import RESULT_KEY as CACHE_RESULT_KEY
from sentsweep.random_seeds import TRIAL_INDEX_KEY, resolve_seed
from sentsweep.tracking.datasets import trial_datasets
from sentsweep.tracking.store import PER_QUERY_ARTIFACT
from sentsweep.tracking.writer import QueuedMlflowWriter
from sentsweep.trainables.st_losses import is_st_method, loss_argument_defaults
from sentsweep.version import code_version

IGNORED_RESULT_KEYS = set(AUTO_RESULT_KEYS) | {"done", "trial_id", "experiment_tag", "should_checkpoint"}
# Config entries that are bookkeeping, not hyperparameters (the parent model's run becomes a tag, lineage; the
# preparation cache's folder changes no result, and the entries a trial used become tags; the researcher's own
# modules become part of the run's code version).
NON_PARAM_KEYS = {TRIAL_INDEX_KEY, "seeds", "parent_model_run_id", "__point__", "preparation_cache", USER_CODE_KEY}
# Params that do not change what a configuration is: whether its model is kept.
UNHASHED_PARAMS = {"keep_model"}
# The experiment tag the MLflow 3 UI reads to choose an experiment's pages (the server's JS bundle: its
# ExperimentKind enum, "Machine learning" = runs first); without it the UI guesses a kind from what the experiment
# holds, and may open it on GenAI traces.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
DESCRIPTION_TAG = "mlflow.note.content"  # a run's description in the MLflow UI (Markdown)
# Why a trial run that a sweep's end finds RUNNING is ended (see SweepTracker.finish).
LOST_TRIAL_REASON = ("its Ray trial was not in the experiment state the sweep resumed from (the driver died before Ray "
                     "Tune saved it), so the trial never ran again under this run")


def config_hash(config: dict) -> str:
    """Hash of a trial's hyperparameters without its seed: the trials of one config over seeds share it. A trial
    that starts from another run's model (`parent_model_run_id`, a chained stage) leaves its `model` out too:
    that is the same seed's model of the earlier stage, one per seed like the seed itself."""
    per_seed = {"seed", "model"} if config.get("parent_model_run_id") else {"seed"}
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS | UNHASHED_PARAMS | per_seed}
    return hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]


def trial_params(config: dict) -> dict:
    """The config entries logged as MLflow params (the seed included); for a sentence-transformers loss as a
    method, every constructor argument it is built with, its defaults included."""
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS}
    if params.get("w", 0) is None:  # a method of one objective, in a stage beside methods of two: it has no w
        del params["w"]
    if is_st_method(config.get("method")):
        params = loss_argument_defaults(config["method"]) | params
    params["seed"] = resolve_seed(config)
    return params


def with_user_code(version: str, user_code: list[dict] | None) -> str:
    """The code version of a trial: sentsweep's (`code_version`) and each module of the researcher's own with its
    content digest ('3f2a1bc + my_sweep.py@9c1e0d2a4b7f'), so runs of an edited loss are told apart."""
    return " + ".join([version] + [f"{Path(entry['path']).name}@{entry['digest']}" for entry in user_code or []])


def selection_tag(config: dict) -> str:
    """Which split chose the checkpoint the trial's final scores belong to."""
    if config.get("select_checkpoint") == "last":
        return "none (the last checkpoint after a fixed number of steps)"
    if config.get("select_checkpoint") == "best_task_dev":
        task = config.get("selection_task")
        return f"best_task_dev (the dev split of task {task}, {(config.get('eval_tasks') or {}).get(task)})"
    if config.get("select_checkpoint") == "validation_loss" and config.get("validation_file"):
        return f"validation_loss (the method's loss on the sentences of {config['validation_file']})"
    if config.get("select_checkpoint") == "validation_loss":
        return (f"validation_loss (the method's loss on {config.get('validation_size', 1000)} corpus sentences "
                "held out of training)")
    return f"best_sts_dev ({config.get('eval_format', 'stsb')} dev split of {config.get('dev_file')})"


def cache_tags(entries: dict) -> dict[str, str]:
    """The tags naming the preparation cache entries a trial used (its report's `RESULT_KEY`, see
    `sentsweep.preparation_cache`): `cache.<stage>` = the entry's key, `cache.<stage>.status` = hit, computed,
    recomputed (the entry was corrupt) or why it was not cached."""
    tags = {}
    for stage, use in entries.items():
        if use.get("key"):
            tags[f"cache.{stage}"] = use["key"]
        tags[f"cache.{stage}.status"] = use["status"]
    return tags


class SweepTracker(Callback):
    """Ray Tune callback: a parent MLflow run for the sweep and exactly one child run per trial.

    With `resume`, the latest unfinished parent run of this sweep is reused (with `extend`, the latest one,
    finished or not: new trials join it), and a trial that already has a run (found by its Ray trial id) keeps
    logging to it, so a resumed sweep has no duplicate runs. Writes
    go through a `QueuedMlflowWriter`, so a tracking server lost mid-sweep loses no result.
    """

    def __init__(self, tracking_uri: str, experiment_name: str, sweep_name: str, pending_dir: str | Path,
                 resume: bool = False, extend: bool = False) -> None:
        from mlflow.tracking import MlflowClient
        from mlflow.tracking.context.registry import resolve_tags

        client = MlflowClient(tracking_uri=tracking_uri)
        self.sweep_name = sweep_name
        experiment_id = _experiment_id(client, experiment_name)
        self.version = code_version()
        # mlflow.source.name (the driver script), .type, .git.commit, mlflow.user, ...: what MLflow itself tags
        # a run started here with; resolved once, since the driver's script and checkout stay the same.
        self.source_tags = resolve_tags()
        self._tables: dict[str, str] = {}  # title -> Markdown, of the stages logged by log_sweep_table
        reopened = ("RUNNING", "KILLED", "FAILED") + (("FINISHED",) if extend else ())
        unfinished = sorted((run for status in reopened for run in client.search_runs(
            [experiment_id],
            f"tags.role = 'sweep' and tags.sweep = '{sweep_name}' and attributes.status = '{status}'",
            order_by=["attributes.start_time DESC"],
            max_results=1,
        )), key=lambda run: run.info.start_time, reverse=True) if resume or extend else []
        if unfinished:  # a crashed driver's sweep (RUNNING), an interrupted or failed one, one extended (FINISHED)
            self.parent_run_id = unfinished[0].info.run_id
            client.update_run(self.parent_run_id, status="RUNNING")
        else:
            self.parent_run_id = client.create_run(
                experiment_id,
                run_name=f"{sweep_name}-{time.strftime('%Y%m%d-%H%M%S')}",
                tags=self.source_tags | {"sweep": sweep_name, "code_version": self.version, "role": "sweep"},
            ).info.run_id
        self.writer = QueuedMlflowWriter(
            tracking_uri, experiment_id, self.parent_run_id,
            Path(pending_dir) / f"mlflow-pending-{self.parent_run_id[:8]}.jsonl",
        )

    def log_sweep_metrics(self, metrics: dict) -> None:
        """Metrics of the sweep as a whole (for example the untrained baseline), on the parent run."""
        for key, value in metrics.items():
            self.writer.client.log_metric(self.parent_run_id, key, value)

    def log_sweep_table(self, title: str, markdown: str) -> None:
        """A stage's table on the sweep's parent run: the artifact tables/<NN>-<title>.md, and the run's
        description, which holds every stage table logged so far in order, each under its title (a title
        logged again replaces its table)."""
        self._tables[title] = markdown
        number = list(self._tables).index(title) + 1
        file_name = re.sub(r"[^A-Za-z0-9._-]+", "_", title).strip("_")
        self.writer.submit({"op": "text", "trial": None, "file": f"tables/{number:02d}-{file_name}.md",
                            "content": markdown})
        self.writer.submit({"op": "tag", "trial": None, "key": DESCRIPTION_TAG, "value": self._description()})

    def _description(self) -> str:
        """The stage tables under their titles, cut to MLflow's tag size if need be (the artifacts are whole)."""
        from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

        text = "\n\n".join(f"## {title}\n\n{markdown}" for title, markdown in self._tables.items())
        if len(text) <= MAX_TAG_VAL_LENGTH:
            return text
        cut = "\n\n... (cut at MLflow's tag size; every table is whole in the run's artifacts, under tables/)"
        return text[:MAX_TAG_VAL_LENGTH - len(cut)] + cut

    def on_trial_start(self, iteration, trials, trial, **info):
        config = trial.config
        params = trial_params(config)
        self.writer.submit({
            "op": "create",
            "trial": trial.trial_id,
            "name": f"{config.get('method')}-{trial.trial_id}",
            "tags": self.source_tags | {
                "mlflow.parentRunId": self.parent_run_id,
                "sweep": self.sweep_name,
                "sweep_run_id": self.parent_run_id,
                "method": str(config.get("method")),
                "seed": str(resolve_seed(config)),
                "config_hash": config_hash(config),
                "code_version": with_user_code(self.version, config.get(USER_CODE_KEY)),
                "ray_trial_id": trial.trial_id,
                "selected_on": selection_tag(config),
            } | ({"parent_model_run_id": config["parent_model_run_id"]} if config.get("parent_model_run_id") else {}),
            "params": {k: json.dumps(v) if isinstance(v, (list, dict)) else str(v) for k, v in params.items()},
            "config": json.loads(json.dumps(params, default=str)),
        })
        datasets = trial_datasets(config)
        if datasets:
            self.writer.submit({"op": "inputs", "trial": trial.trial_id, "datasets": [
                {"dataset": dataset.to_dictionary(), "context": context} for dataset, context in datasets]})

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
        for key, value in cache_tags(result.get(CACHE_RESULT_KEY) or {}).items():
            self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": key, "value": value})

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

    def end_interrupted(self) -> list[str]:
        """End the runs a stopped driver left RUNNING (its trials' and the sweep's) as KILLED, the trials' with the
        tag `interrupted`; `--resume` reopens them. Returns what those trials were. (Found in MLflow, not in this
        object: a restored Ray Tune run calls back a copy of it, restored with the experiment's state.)"""
        if not self.writer.flush(attempts=3, wait_s=2.0):
            return []
        stopped = self._end_running_trial_runs({"interrupted": "true"})
        self.writer.client.set_terminated(self.parent_run_id, status="KILLED")
        return stopped

    def end_failed(self, reason: str) -> None:
        """End the sweep's run FAILED (tag `failure_reason`) after an error outside any trial, and its trials' runs
        left RUNNING KILLED (tag `interrupted`), as far as the store answers; `--resume` reopens them."""
        if self.writer.flush(attempts=3, wait_s=2.0):
            self._end_running_trial_runs({"interrupted": "true"})
            self.writer.client.set_tag(self.parent_run_id, "failure_reason", reason[:5000])
            self.writer.client.set_terminated(self.parent_run_id, status="FAILED")

    def finish(self, attempts: int = 6, wait_s: float = 5.0) -> bool:
        """Write what is still queued and mark the sweep's parent run finished; False if the store stayed away.

        A trial run still RUNNING then has lost its trial: a driver killed before Ray Tune saved the trial in its
        experiment state left the run, and the resumed sweep, which never knew the trial, ran its configuration
        and seed again (or, searching, another). Such runs end KILLED with the tags `interrupted` and `lost_trial`,
        rather than stay RUNNING in MLflow for ever; the tables count them as runs left out."""
        if not self.writer.flush(attempts=attempts, wait_s=wait_s):
            return False
        self._end_running_trial_runs({"interrupted": "true", "lost_trial": LOST_TRIAL_REASON})
        self.log_sweep_metrics({"mlflow_write_seconds": self.writer.write_seconds})  # the writer's docstring
        self.writer.client.set_terminated(self.parent_run_id, status="FINISHED")
        return True

    def _end_running_trial_runs(self, tags: dict[str, str]) -> list[str]:
        """End this sweep's trial runs that are RUNNING as KILLED, with `tags`; returns what their trials were."""
        client = self.writer.client
        running = client.search_runs([self.writer.experiment_id], f"tags.sweep_run_id = '{self.parent_run_id}' and "
                                     "attributes.status = 'RUNNING'")
        stopped = []
        for run in running:
            run_tags = run.data.tags
            for key, value in tags.items():
                client.set_tag(run.info.run_id, key, value)
            client.set_terminated(run.info.run_id, status="KILLED")
            stopped.append(f"{run_tags.get('ray_trial_id')}: {run_tags.get('method')} seed {run_tags.get('seed')} "
                           f"(config {run_tags.get('config_hash')})")
        return stopped


def _experiment_id(client, name: str) -> str:
    """The experiment `name`, created if need be, with its kind tag (unless it has a kind already). Two sweeps
    that start together may both find it missing: the one whose creation the store refuses as existing takes the
    other's."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        try:
            return client.create_experiment(name, artifact_location=artifact_location(client.tracking_uri, name),
                                            tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND})
        except MlflowException as error:
            experiment = client.get_experiment_by_name(name)
            if error.error_code != "RESOURCE_ALREADY_EXISTS" or experiment is None:
                raise
    if EXPERIMENT_KIND_TAG not in experiment.tags:
        client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return experiment.experiment_id


def artifact_location(tracking_uri: str, experiment_name: str) -> str | None:
    """Where a new experiment's artifacts (tables, per-query outcomes, models) go: beside a SQLite store's file,
    in `mlartifacts/<experiment>` (MLflow's own default is ./mlruns of whichever folder the driver started in,
    shared by every store's experiment 1); a server's own artifact store otherwise (None)."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    folder = Path(tracking_uri[len("sqlite:///"):]).resolve().parent / "mlartifacts" / experiment_name
    return folder.as_uri()


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
