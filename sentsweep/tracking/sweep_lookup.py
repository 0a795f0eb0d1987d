"""Which run of a sweep `--resume` continues, and what there is to resume.

A sweep's run is the experiment's run tagged `role` = sweep and `sweep` = the sweep's name. `--resume` continues the
latest one that did not finish (RUNNING: its driver died; KILLED: stopped; FAILED), `--extend` the latest one of
any status (`latest_sweep_run`); the driver checks first that there is one (`resume_target`): a sweep whose runs
all finished has nothing to resume, and an experiment without a run of the sweep has no sweep to resume.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentsweep.tracking.sqlite_store import sqlite_store_path
from sentsweep.tracking.writer import DEFAULT_WAIT_S, call_waiting

RESUMABLE = ("RUNNING", "KILLED", "FAILED")  # the statuses of a sweep run that --resume continues


def latest_sweep_run(client, experiment_id: str, sweep_name: str, statuses: tuple[str, ...]):
    """The latest-started run of sweep `sweep_name` in the experiment whose status is one of `statuses`; None."""
    found = [run for status in statuses for run in client.search_runs(
        [experiment_id], f"tags.role = 'sweep' and tags.sweep = '{sweep_name}' and attributes.status = '{status}'",
        order_by=["attributes.start_time DESC"], max_results=1)]
    return max(found, key=lambda run: run.info.start_time, default=None)


@dataclass(frozen=True)
class ResumeTarget:
    """What `--resume` finds: the sweep's run to continue (`run_id`, `finished` False), or the latest finished one
    (`finished` True) where every run of the sweep finished, or no run at all (`run_id` None)."""

    run_id: str | None
    finished: bool = False


def resume_target(tracking_uri: str, experiment_name: str, sweep_name: str,
                  wait_s: float = DEFAULT_WAIT_S) -> ResumeTarget:
    """The sweep run `--resume` would continue (read without creating anything: a SQLite store that does not exist
    yet, or an experiment that does not, hold no run), waiting for a store that cannot be reached as `call_waiting`
    does."""
    from mlflow.tracking import MlflowClient

    if tracking_uri.startswith("sqlite:///"):
        path = sqlite_store_path(tracking_uri)
        if not path.is_file() or path.stat().st_size == 0:
            return ResumeTarget(None)
    client = call_waiting(tracking_uri, "opening the tracking store",
                          lambda: MlflowClient(tracking_uri=tracking_uri),
                          wait_s=wait_s)
    experiment = call_waiting(tracking_uri, "finding the experiment to resume", client.get_experiment_by_name,
                              experiment_name, wait_s=wait_s)
    if experiment is None:
        return ResumeTarget(None)
    for statuses, finished in ((RESUMABLE, False), (("FINISHED",), True)):
        run = call_waiting(tracking_uri, "finding the sweep's run to resume", latest_sweep_run, client,
                           experiment.experiment_id, sweep_name, statuses, wait_s=wait_s)
        if run is not None:
            return ResumeTarget(run.info.run_id, finished)
    return ResumeTarget(None)
