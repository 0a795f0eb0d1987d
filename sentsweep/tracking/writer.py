"""Ordered, loss-free writes of trial results to MLflow, surviving a tracking server that goes away.

Every write is an operation on a trial (create its run, log metrics or params, set a tag or several, store a JSON
or text artifact, log its dataset inputs, terminate it), with trial None on the sweep's parent run, or with trial
{"configuration": config hash} on a configuration's run (`sentsweep.tracking.configurations`; created by a
"create" op like a trial's, and found again by its tags `configuration_of` and `config_hash`). A trial's "create"
or "nest" op may name its parent run the same way. Operations are applied in
order; when the store cannot be reached they stay queued, mirrored to a JSON-lines file,
and are retried on later writes (at most every `retry_interval_s`) and at the end of the sweep. Whatever is
still queued then can be replayed later:

    python -m sentsweep.tracking.writer PENDING_FILE [--tracking-uri URI]

Runs are found again by their Ray trial id tag, so applying an operation twice never duplicates a run.

The writes are synchronous, in Ray Tune's driver loop (the tracker's callbacks): while they run, no trial is
started and no result is read. `write_seconds` counts the time they took (the sweep logs it on its run as
`mlflow_write_seconds`), so that a sweep's per-trial overhead in the driver is a figure.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

from sentsweep.tracking.store import store_reachable

logger = logging.getLogger(__name__)
# The run tag listing its table artifacts (MLflow's log_table sets it; the UI shows those files as tables).
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"


class QueuedMlflowWriter:
    """Applies trial operations to one sweep's MLflow runs in order, queueing them while the store is down."""

    def __init__(self, tracking_uri: str, experiment_id: str, parent_run_id: str, pending_file: str | Path,
                 retry_interval_s: float = 5.0) -> None:
        self.tracking_uri = tracking_uri
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id
        self.pending_file = Path(pending_file)
        self.retry_interval_s = retry_interval_s
        self.queue: list[dict] = []
        self._run_ids: dict[str, str] = {}
        self._last_failure = 0.0
        self._client = None
        self.write_seconds = 0.0  # spent in flush: applying operations, checking the store, saving the queue
        if tracking_uri.startswith("http"):
            # Fail fast and queue, rather than let the client's own retries stall the sweep for minutes.
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")

    def __getstate__(self) -> dict:  # picklable for Ray Tune's experiment state
        state = self.__dict__.copy()
        state["_client"] = None
        return state

    @property
    def client(self):
        if self._client is None:
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    @property
    def pending(self) -> int:
        return len(self.queue)

    def submit(self, operation: dict) -> None:
        """Queue `operation` and apply everything queued, unless the store failed less than a retry interval ago."""
        self.queue.append(operation)
        if self.queue[:-1] and time.monotonic() - self._last_failure < self.retry_interval_s:
            self._save()
            return
        self.flush()

    def flush(self, attempts: int = 1, wait_s: float = 0.0) -> bool:
        """Apply queued operations in order; True when none is left."""
        started = time.perf_counter()
        try:
            return self._flush(attempts, wait_s)
        finally:
            self.write_seconds += time.perf_counter() - started

    def _flush(self, attempts: int, wait_s: float) -> bool:
        for attempt in range(attempts):
            while self.queue:
                try:
                    self._apply(self.queue[0])
                except Exception as error:  # noqa: BLE001 - any store failure: decide below
                    if store_reachable(self.tracking_uri):
                        logger.error("MLflow rejected %s: %s", self.queue[0], error)
                        self._reject(self.queue.pop(0), error)
                        continue
                    self._last_failure = time.monotonic()
                    break
                self.queue.pop(0)
            self._save()
            if not self.queue:
                return True
            if attempt + 1 < attempts:
                time.sleep(wait_s)
        return False

    def _save(self) -> None:
        if self.queue:
            self.pending_file.parent.mkdir(parents=True, exist_ok=True)
            header = {"tracking_uri": self.tracking_uri, "experiment_id": self.experiment_id,
                      "parent_run_id": self.parent_run_id}
            lines = [json.dumps(header)] + [json.dumps(op) for op in self.queue]
            self.pending_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif self.pending_file.exists():
            self.pending_file.unlink()

    def _reject(self, operation: dict, error: Exception) -> None:
        rejected = self.pending_file.with_suffix(".rejected.jsonl")
        with rejected.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"operation": operation, "error": str(error)}) + "\n")

    def _run_id(self, address: str | dict | None) -> str | None:
        """The run an operation's address names: None the sweep's, a Ray trial id its trial's, {"configuration":
        config hash} the configuration's; None where it has no run yet."""
        if address is None:
            return self.parent_run_id
        key = _cache_key(address)
        if isinstance(address, dict):
            query = (f"tags.configuration_of = '{self.parent_run_id}' and "
                     f"tags.config_hash = '{address['configuration']}'")
        else:
            query = f"tags.sweep_run_id = '{self.parent_run_id}' and tags.ray_trial_id = '{address}'"
        if key not in self._run_ids:
            runs = self.client.search_runs([self.experiment_id], query, max_results=1)
            if runs:
                self._run_ids[key] = runs[0].info.run_id
        return self._run_ids.get(key)

    def _parent_run_id(self, operation: dict) -> str:
        """The run id of the operation's "parent"; the sweep's where that run was never created (its own "create"
        was rejected: logged), so that the trial's run and results are kept all the same."""
        parent = self._run_id(operation["parent"])
        if parent is None:
            logger.warning("no MLflow run for %s, the parent of %s: it goes under the sweep's run",
                           operation["parent"], operation["trial"])
            return self.parent_run_id
        return parent

    def _apply(self, operation: dict) -> None:
        from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, RunTag
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        kind, trial_id = operation["op"], operation["trial"]
        run_id = self._run_id(trial_id)
        if kind == "create":
            if run_id is None:
                tags = operation["tags"] | ({"mlflow.parentRunId": self._parent_run_id(operation)}
                                            if "parent" in operation else {})
                run = self.client.create_run(self.experiment_id, run_name=operation["name"], tags=tags)
                run_id = self._run_ids[_cache_key(trial_id)] = run.info.run_id
            else:  # a retried or resumed trial keeps its run (under its parent, by its name: a run of older code)
                self.client.update_run(run_id, status="RUNNING", name=operation["name"])
                if "parent" in operation:
                    self.client.set_tag(run_id, "mlflow.parentRunId", self._parent_run_id(operation))
            # Also for a run that exists: creating a run, logging its params and its config are separate writes,
            # and a driver killed (or a store lost) between them leaves the run without them until this create is
            # applied again. (MLflow accepts a param logged again with the value it has.)
            self._log_params(run_id, operation["params"])
            if "config" in operation:
                self.client.log_dict(run_id, operation["config"], "config.json")
        elif kind == "experiment_tag":  # of the sweep's experiment, e.g. a saved view of its runs list
            self.client.set_experiment_tag(self.experiment_id, operation["key"], operation["value"])
        elif run_id is None:
            raise KeyError(f"no MLflow run for trial {trial_id}")
        elif kind == "nest":  # a trial's run (of an earlier sweep process) under its parent run, renamed
            self.client.set_tag(run_id, "mlflow.parentRunId", self._parent_run_id(operation))
            self.client.update_run(run_id, name=operation["name"])
        elif kind == "params":  # MLflow refuses a param logged again with another value: see the op's maker
            self._log_params(run_id, operation["params"])
        elif kind == "table":  # a table artifact as MLflow's log_table writes it, replacing one of that name
            self.client.log_text(run_id, operation["content"], operation["file"])
            logged = json.loads(self.client.get_run(run_id).data.tags.get(LOGGED_ARTIFACTS_TAG, "[]"))
            entry = {"path": operation["file"], "type": "table"}
            if entry not in logged:
                self.client.set_tag(run_id, LOGGED_ARTIFACTS_TAG, json.dumps(logged + [entry]))
        elif kind == "metrics":
            self.client.log_batch(run_id, metrics=[Metric(*m) for m in operation["metrics"]])
        elif kind == "tag":
            self.client.set_tag(run_id, operation["key"], operation["value"])
        elif kind == "tags":
            self.client.log_batch(run_id, tags=[RunTag(k, v) for k, v in operation["tags"].items()])
        elif kind == "artifact":
            self.client.log_dict(run_id, operation["content"], operation["file"])
        elif kind == "text":
            self.client.log_text(run_id, operation["content"], operation["file"])
        elif kind == "inputs":  # [{"dataset": Dataset.to_dictionary(), "context": "training"}, ...]
            self.client.log_inputs(run_id, datasets=[
                DatasetInput(Dataset(**item["dataset"]), tags=[InputTag(MLFLOW_DATASET_CONTEXT, item["context"])])
                for item in operation["datasets"]
            ])
        elif kind == "terminate":
            self.client.set_terminated(run_id, status=operation["status"])
        else:
            raise ValueError(f"unknown operation {kind!r}")


    def _log_params(self, run_id: str, params: dict[str, str]) -> None:
        """`params` in batches of MLflow's most per request (a trial may have more)."""
        from mlflow.entities import Param
        from mlflow.utils.validation import MAX_PARAMS_TAGS_PER_BATCH

        items = [Param(key, value) for key, value in params.items()]
        for start in range(0, len(items), MAX_PARAMS_TAGS_PER_BATCH):
            self.client.log_batch(run_id, params=items[start:start + MAX_PARAMS_TAGS_PER_BATCH])


def _cache_key(address: str | dict) -> str:
    """Where `QueuedMlflowWriter` keeps the run id of a trial's or a configuration's address."""
    return f"configuration:{address['configuration']}" if isinstance(address, dict) else address


def replay(pending_file: str | Path, tracking_uri: str | None = None) -> int:
    """Apply the operations saved in `pending_file`; returns how many are still pending."""
    lines = Path(pending_file).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    writer = QueuedMlflowWriter(tracking_uri or header["tracking_uri"], header["experiment_id"],
                                header["parent_run_id"], pending_file)
    writer.queue = [json.loads(line) for line in lines[1:]]
    writer.flush()
    return writer.pending


def main(argv=None, prog: str = "python -m sentsweep.tracking.writer") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="replay queued writes")
    parser.add_argument("pending_file")
    parser.add_argument("--tracking-uri", default=None, help="default: the URI the sweep used")
    args = parser.parse_args(argv)
    left = replay(args.pending_file, args.tracking_uri)
    print(f"{left} operations still pending" if left else "all queued operations written")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
