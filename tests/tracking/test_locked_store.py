"""A SQLite store that another process holds locked is a store the sweep cannot reach (sentsweep.tracking.store,
sentsweep.tracking.writer): its writes wait in the queue, its reads wait within --mlflow-wait and then stop in one
line, and MLflow's and SQLAlchemy's tracebacks go to the sweep's store log, not to the terminal. The lock at each
point of a sweep: tests/sweep/test_fault_matrix.py (LOCK-BLINK, LOCK-OUTAGE)."""

from __future__ import annotations

import logging

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.tracking.store import store_locked, store_reachable
from sentsweep.tracking.store_log import STORE_LOG, store_reports_logged
from sentsweep.tracking.writer import MlflowUnavailable, QueuedMlflowWriter, read_pending_file
from tests.helpers.cluster_helpers import sqlite_store
from tests.helpers.sqlite_locker import SqliteLocker


def test_a_store_held_locked_by_another_process_is_unreachable_until_released(tmp_path):
    uri = sqlite_store(tmp_path)
    locker = SqliteLocker(tmp_path / "mlflow.db")
    assert not store_locked(uri, timeout_s=0.5)
    locker.lock()
    try:
        assert store_locked(uri, timeout_s=0.5) and not store_reachable(uri, timeout_s=0.5)
    finally:
        locker.start()
    assert not store_locked(uri, timeout_s=0.5)
    assert not store_locked(f"sqlite:///{tmp_path / 'none.db'}") and not (tmp_path / "none.db").exists()


def test_mlflow_and_sqlalchemy_reports_go_to_the_store_log_alone(tmp_path, capfd):
    with store_reports_logged(tmp_path / "out") as log:
        try:
            raise RuntimeError("database is locked")
        except RuntimeError:
            logging.getLogger("mlflow.store.db.utils").exception("SQLAlchemy database error")
        logging.getLogger("sqlalchemy.pool.impl.QueuePool").error("Exception during reset")
    assert log == tmp_path / "out" / STORE_LOG
    written = log.read_text()
    assert "mlflow.store.db.utils ERROR: SQLAlchemy database error" in written
    assert "Traceback" in written and "RuntimeError: database is locked" in written
    assert "sqlalchemy.pool.impl.QueuePool ERROR: Exception during reset" in written
    printed = capfd.readouterr()
    assert printed.out == printed.err == ""
    assert logging.getLogger("mlflow.store").propagate and logging.getLogger("sqlalchemy").propagate


def test_writes_to_a_locked_store_are_queued_and_a_read_stops_in_one_line_past_its_wait(tmp_path, capfd):
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    experiment = client.create_experiment("locked")
    sweep_run = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    pending = tmp_path / "out" / "mlflow-pending.jsonl"
    writer = QueuedMlflowWriter(uri, experiment, sweep_run, pending, retry_interval_s=1, wait_s=3)
    locker = SqliteLocker(tmp_path / "mlflow.db")
    capfd.readouterr()  # (MLflow's lines as it opened the store)
    locker.lock()
    try:
        with store_reports_logged(tmp_path / "out"):
            writer.submit({"op": "tag", "trial": None, "key": "written", "value": "while locked"})
            assert [operation["key"] for operation in read_pending_file(pending)[1]] == ["written"]
            with pytest.raises(MlflowUnavailable) as stopped:
                writer.call("reading the stage's trial runs", client.get_run, sweep_run)
    finally:
        locker.start()
    assert str(stopped.value) == (
        f"MLflow at {uri} stayed unreachable for 3 s while reading the stage's trial runs: the sweep's MLflow run "
        f"{sweep_run} stays RUNNING, and 1 queued writes (1 tags) of 0 trial runs and the sweep's run in {pending}")
    printed = capfd.readouterr()
    assert printed.err.splitlines() == [
        f"MLflow at {uri} cannot be written to (another process holds its SQLite file locked, or the file cannot be "
        "opened) while reading the stage's trial runs: waiting for it, at most 3 s (--mlflow-wait)"]
    assert "Traceback" not in printed.out + printed.err
    assert writer.flush()  # the lock released: the queued write goes in, the pending file is gone
    assert client.get_run(sweep_run).data.tags["written"] == "while locked" and not pending.exists()
