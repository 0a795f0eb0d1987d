"""Every MLflow access of a sweep's driver, surviving a tracking store that goes away and comes back.

During a sweep every MLflow access goes through one `QueuedMlflowWriter` per sweep run (`SweepTracker.writer`):
a write is an operation handed to `submit`, applied in order, queued and mirrored to a pending file while the store
cannot be reached, and never lost or duplicated; a read (or a write no operation holds) is `call(what, function,
*args)`, run once everything queued is written, retried for at most `--mlflow-wait` seconds, past which
`MlflowUnavailable` says in one line what was being done and what is queued where. `sentsweep replay PENDING_FILE`
applies a pending file by hand.

    writer.submit({"op": "tag", "trial": None, "key": "stage", "value": "2"})   # the sweep's own run
    runs = writer.call("reading the stage's trial runs", fetch_trial_runs, uri, name, run_id)

Operations, the pending file, refused writes and retries: docs/fault_tolerance.md, "How the driver's MLflow writes
survive an outage"."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import weakref
from collections import Counter
from pathlib import Path

from sentsweep.faults import waiting_for_mlflow
from sentsweep.tracking.store import redact, store_locked, store_reachable, unreachable_words

logger = logging.getLogger(__name__)
# The run tag listing its table artifacts (MLflow's log_table sets it; the UI shows those files as tables).
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"

DEFAULT_WAIT_S = 600.0  # --mlflow-wait: the project's choice (see docs/fault_tolerance.md)
RETRY_INTERVAL_S = 5.0
# an access that failed while the store could be reached, but was not refused by it (`refused_by_the_store`), is tried
# this many times in all, RETRY_PAUSE_S apart, before a queued write is set aside as a refused one and any other access
# raises its error (the project's choice)
ATTEMPTS_ON_THE_WAY = 3
RETRY_PAUSE_S = 0.5
# how `describe_queue` names the operations of each kind (an operation of another kind is named by its `op`)
OPERATION_NAMES = {"create": "run starts", "metrics": "metric batches", "tag": "tags", "tags": "tag batches",
                   "params": "param batches", "artifact": "JSON artifacts", "text": "text artifacts",
                   "table": "tables", "inputs": "dataset inputs", "nest": "runs nested", "experiment_tag":
                   "experiment tags", "terminate": "run ends", "file": "files"}

_live_writers: weakref.WeakValueDictionary[str, QueuedMlflowWriter] = weakref.WeakValueDictionary()


class MlflowUnavailable(Exception):
    """The tracking store stayed unreachable for a whole `wait_s` bound; the message is one line saying what was
    being done, the sweep run's state and what is queued in which file."""


class StoreUnreachable(Exception):
    """Queued operations could not be written: the store cannot be reached now."""


class NoRunForTrial(KeyError):
    """An operation for a trial whose run is not in the store (its "create" was refused)."""


def refused_by_the_store(error: Exception) -> bool:
    """Whether `error` is the store's refusal of a write or read, which trying again cannot mend: an MLflow error of a
    client-error kind (HTTP 4xx: a value or key it does not take, a run that does not exist), or a trial without a
    run. A failure on the way is not one: an exception in the client (MLflow's REST client reports it as "API
    request to ... failed with exception ..."), a server error (5xx), a locked SQLite file."""
    from mlflow.exceptions import MlflowException

    if isinstance(error, NoRunForTrial):
        return True
    return isinstance(error, MlflowException) and 400 <= error.get_http_status_code() < 500


def tried_again(what: str, error: Exception, failures: int) -> bool:
    """Whether an access that failed `failures` times in a row while the store could be reached is tried once more:
    not where the store refused it (`refused_by_the_store`), nor after ATTEMPTS_ON_THE_WAY tries in all; else after
    a warning naming `what` and a pause of RETRY_PAUSE_S."""
    if refused_by_the_store(error) or failures >= ATTEMPTS_ON_THE_WAY:
        return False
    logger.warning("%s failed (%s); trying again", what, error)
    time.sleep(RETRY_PAUSE_S)
    return True


def describe_queue(queue: list[dict]) -> str:
    """What queued operations hold, in words: '70 queued writes (4 run starts, 52 metric batches, ...) of 4 trial
    runs, 2 configuration runs and the sweep's run' (the configuration runs named where there are any)."""
    if not queue:
        return "no queued writes"
    kinds = Counter(operation["op"] for operation in queue)
    trials = {operation["trial"] for operation in queue if isinstance(operation["trial"], str)}
    configurations = {_cache_key(operation["trial"]) for operation in queue if isinstance(operation["trial"], dict)}
    parts = ", ".join(f"{count} {OPERATION_NAMES.get(kind, kind)}" for kind, count in kinds.items())
    of_configurations = f", {len(configurations)} configuration runs" if configurations else ""
    sweep_run = " and the sweep's run" if any(operation["trial"] is None for operation in queue) else ""
    return f"{len(queue)} queued writes ({parts}) of {len(trials)} trial runs{of_configurations}{sweep_run}"


def call_waiting(tracking_uri: str, what: str, function, *args, wait_s: float = DEFAULT_WAIT_S,
                 interval_s: float = RETRY_INTERVAL_S, state=lambda: "nothing is queued", **kwargs):
    """`function(*args, **kwargs)`, retried every `interval_s` while the store at `tracking_uri` cannot be reached,
    for at most `wait_s` seconds; then `MlflowUnavailable`, its message saying `what` was being done and `state()`
    (what is kept). An error while the store can be reached is raised: at once where the store refused the call
    (`refused_by_the_store`), after ATTEMPTS_ON_THE_WAY tries in all where it failed on the way (MLflow 3.17's
    client failed a driver's first requests so, intermittently: docs/fault_tolerance.md). (`QueuedMlflowWriter.call`
    runs this after writing the queue; a sweep's accesses before its writer exists call it directly.)"""
    deadline = time.monotonic() + wait_s
    failures_on_the_way = 0
    announced = False
    while True:
        try:
            if store_locked(tracking_uri):  # tried first: MLflow's client would wait 20 s, then log a traceback
                raise StoreUnreachable(f"MLflow at {redact(tracking_uri)} is locked by another process")
            return function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure: the store's reachability decides below
            if not isinstance(error, StoreUnreachable) and store_reachable(tracking_uri):
                failures_on_the_way += 1
                if tried_again(what, error, failures_on_the_way):
                    continue
                raise
            if time.monotonic() >= deadline:
                outage = f"stayed unreachable for {wait_s:g} s" if wait_s else "cannot be reached"
                raise MlflowUnavailable(f"MLflow at {redact(tracking_uri)} {outage} while {what}: {state()}") from error
        if not announced:
            print(f"MLflow at {redact(tracking_uri)} {unreachable_words(tracking_uri)} while {what}: waiting for it, "
                  f"at most {wait_s:g} s (--mlflow-wait)", file=sys.stderr, flush=True)
            announced = True
        waiting_for_mlflow()  # the fault matrix's MLflow outages (sentsweep.faults)
        time.sleep(max(0.0, min(interval_s, deadline - time.monotonic())))


def read_pending_file(path: str | Path) -> tuple[dict, list[dict]]:
    """(header, operations) of a pending file."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line.strip()]


class QueuedMlflowWriter:
    """Applies operations to one sweep's MLflow runs in order, queueing them while the store is down, and runs the
    sweep's reads after them (`call`), waiting a bounded time for a store that went away."""

    def __init__(self, tracking_uri: str, experiment_id: str, parent_run_id: str, pending_file: str | Path,
                 retry_interval_s: float = RETRY_INTERVAL_S, wait_s: float = DEFAULT_WAIT_S) -> None:
        self.tracking_uri = tracking_uri
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id
        self.pending_file = Path(pending_file)
        self.retry_interval_s = retry_interval_s
        self.wait_s = wait_s
        self.queue: list[dict] = self._saved_queue()
        self._run_ids: dict[str, str] = {}
        self._last_failure = 0.0
        self._client = None
        self.write_seconds = 0.0  # spent in flush: applying operations, checking the store, saving the queue
        if tracking_uri.startswith("http"):
            # Fail fast and queue, rather than let the client's own retries stall the sweep for minutes.
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
            os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")
        _live_writers[str(self.pending_file.resolve())] = self

    def __reduce__(self):
        """Unpickled (Ray Tune restores its callbacks with the experiment's state) as this process's writer of the
        same pending file, so that one queue holds the sweep's writes; the queue itself travels in the file."""
        return _writer_of, (self.tracking_uri, self.experiment_id, self.parent_run_id, str(self.pending_file),
                            self.retry_interval_s, self.wait_s)

    def _saved_queue(self) -> list[dict]:
        """The operations of an existing pending file of this sweep run (a stopped or killed driver's), taken over."""
        if not self.pending_file.exists():
            return []
        header, queue = read_pending_file(self.pending_file)
        if header.get("parent_run_id") != self.parent_run_id:
            raise RuntimeError(f"{self.pending_file} holds the writes of sweep run {header.get('parent_run_id')}, "
                               f"not of {self.parent_run_id}; write them with: sentsweep replay {self.pending_file}")
        return queue

    @property
    def client(self):
        if self._client is None:
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    @property
    def pending(self) -> int:
        return len(self.queue)

    def describe(self) -> str:
        """What is queued and where: '70 queued writes (...) in out/mlflow-pending-1a2b3c4d.jsonl'."""
        return describe_queue(self.queue) + (f" in {self.pending_file}" if self.queue else "")

    def submit(self, operation: dict) -> None:
        """Queue `operation` and apply everything queued, unless the store failed less than a retry interval ago."""
        self.queue.append(operation)
        if self.queue[:-1] and time.monotonic() - self._last_failure < self.retry_interval_s:
            self._save()
            return
        self.flush()

    def call(self, what: str, function, *args, wait_s: float | None = None, **kwargs):
        """`function(*args, **kwargs)` once everything queued is written, retried while the store cannot be reached,
        for at most `wait_s` seconds (default: the writer's `wait_s`), then `MlflowUnavailable`. `what` says what it
        does ('reading the stage's trial runs'), for that message. An error while the store can be reached is
        raised as `call_waiting` says: at once if the store refused the call, else after ATTEMPTS_ON_THE_WAY tries."""
        def attempt():
            if not self.flush():
                raise StoreUnreachable(f"MLflow at {redact(self.tracking_uri)} cannot be reached")
            return function(*args, **kwargs)

        return call_waiting(self.tracking_uri, what, attempt, wait_s=self.wait_s if wait_s is None else wait_s,
                            interval_s=self.retry_interval_s, state=self.state)

    def settle(self, what: str, wait_s: float | None = None) -> None:
        """Write everything queued, waiting for the store as `call` does."""
        self.call(what, lambda: None, wait_s=wait_s)

    def state(self) -> str:
        """The sweep run's state and what is queued, in words, for a message."""
        return (f"the sweep's MLflow run {self.parent_run_id} stays RUNNING, and "
                + (self.describe() if self.queue else "nothing is queued"))

    def flush(self, attempts: int = 1, wait_s: float = 0.0) -> bool:
        """Apply queued operations in order; True when none is left."""
        started = time.perf_counter()
        try:
            return self._flush(attempts, wait_s)
        finally:
            self.write_seconds += time.perf_counter() - started

    def _flush(self, attempts: int, wait_s: float) -> bool:
        for attempt in range(attempts):
            failures = 0  # of the operation at the head of the queue, while the store could be reached
            locked = bool(self.queue) and store_locked(self.tracking_uri)  # as `call_waiting` tries it first
            if locked:
                self._last_failure = time.monotonic()
            while self.queue and not locked:
                try:
                    self._apply(self.queue[0])
                except Exception as error:  # noqa: BLE001 - any store failure: decide below
                    if not store_reachable(self.tracking_uri):
                        self._last_failure = time.monotonic()
                        break
                    failures += 1
                    # tried again, the same write first (the queue kept in order), or set aside
                    if not tried_again(f"writing {self.queue[0]['op']}", error, failures):
                        logger.error("MLflow rejected %s: %s", self.queue[0], error)
                        self._reject(self.queue.pop(0), error)
                        failures = 0
                    continue
                self.queue.pop(0)
                failures = 0
            self._save()
            if not self.queue:
                return True
            if attempt + 1 < attempts:
                time.sleep(wait_s)
        return False

    def _save(self) -> None:
        """Mirror the queue to the pending file, replaced atomically (a driver killed meanwhile leaves the old one
        whole); deleted once the queue is empty, every operation in the store."""
        if self.queue:
            self.pending_file.parent.mkdir(parents=True, exist_ok=True)
            header = {"tracking_uri": self.tracking_uri, "experiment_id": self.experiment_id,
                      "parent_run_id": self.parent_run_id}
            lines = [json.dumps(header)] + [json.dumps(op) for op in self.queue]
            partial = self.pending_file.with_name(self.pending_file.name + ".partial")
            partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(partial, self.pending_file)
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
            raise NoRunForTrial(f"no MLflow run for trial {trial_id}")
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
        elif kind == "file":  # a file the driver wrote in its output folder (a plot), in the artifacts' `folder`
            self.client.log_artifact(run_id, operation["path"], operation["folder"])
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


def _writer_of(tracking_uri: str, experiment_id: str, parent_run_id: str, pending_file: str,
               retry_interval_s: float, wait_s: float) -> QueuedMlflowWriter:
    """This process's writer of `pending_file` (see `QueuedMlflowWriter.__reduce__`), made if there is none."""
    live = _live_writers.get(str(Path(pending_file).resolve()))
    if live is not None and live.parent_run_id == parent_run_id:
        return live
    return QueuedMlflowWriter(tracking_uri, experiment_id, parent_run_id, pending_file, retry_interval_s, wait_s)


def replay(pending_file: str | Path, tracking_uri: str | None = None) -> int:
    """Apply the operations saved in `pending_file`; returns how many are still pending."""
    header, _ = read_pending_file(pending_file)
    writer = QueuedMlflowWriter(tracking_uri or header["tracking_uri"], header["experiment_id"],
                                header["parent_run_id"], pending_file)  # takes the file's operations over
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
