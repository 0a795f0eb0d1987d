"""A SQLite store held locked by another process, as another sweep's long write or a backup holds it:
`python tests/helpers/sqlite_locker.py lock|release STORE_FILE` takes the store's write lock in a process of its own (a
connection in `BEGIN EXCLUSIVE`, held until it is released) and returns once it is held, or ends that process and
returns once the lock is free. `SqliteLocker` does the same from a test, and gives the commands to a driver that
locks and releases its store at its fault points (`sentsweep.faults`: BLINK, OUTAGE, CRASH), as `MlflowServer`
gives those that stop and start a server."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HOLD = ("import sqlite3, sys, time\nconnection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)\n"
        "connection.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(3600)\n")


class SqliteLocker:
    """Takes and releases the write lock of the SQLite store `store` (its holder's process id in STORE.locker)."""

    def __init__(self, store: Path) -> None:
        self.store = Path(store)
        self.uri = f"sqlite:///{self.store}"
        self.pid_file = self.store.with_name(self.store.name + ".locker")

    def lock(self) -> None:
        """Hold the store's write lock from another process, returning once it is held."""
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(self.store)], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        if holder.stdout.readline() != "locked\n":
            raise RuntimeError(f"could not lock {self.store}")
        self.pid_file.write_text(str(holder.pid))

    def start(self) -> None:
        """Release the lock (the store is back), returning once a write can take it."""
        if self.pid_file.exists():
            try:
                os.kill(int(self.pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.pid_file.unlink()
        while True:
            try:
                connection = sqlite3.connect(self.store, isolation_level=None, timeout=1)
                connection.execute("BEGIN EXCLUSIVE")
                connection.execute("ROLLBACK")
                connection.close()
                return
            except sqlite3.OperationalError:
                time.sleep(0.2)

    kill = start  # a test's clean-up: the lock released

    def fault_commands(self) -> dict[str, str]:
        """The environment of a driver that locks and releases this store at its fault points (`sentsweep.faults`)."""
        from sentsweep.faults import MLFLOW_START_ENV, MLFLOW_STOP_ENV

        control = shlex.join([sys.executable, str(Path(__file__).resolve()), "{}", str(self.store)])
        return {MLFLOW_STOP_ENV: control.replace("{}", "lock"), MLFLOW_START_ENV: control.replace("{}", "release")}


if __name__ == "__main__":
    action, store = sys.argv[1:]
    locker = SqliteLocker(Path(store))
    if action == "lock":
        locker.lock()
    elif action == "release":
        locker.start()
    else:
        sys.exit(f"unknown action {action!r}: lock or release")
