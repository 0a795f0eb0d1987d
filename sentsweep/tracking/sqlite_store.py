"""A SQLite tracking store (`sqlite:///path/mlflow.db`), opened and created one process at a time.

MLflow creates a store's tables the first time a client opens a new file (alembic's migrations, one after
another); two sweeps started together on a new store each ran them at once, and one crashed or both did, leaving a
file no later client could open. Here a store is prepared before the first writer starts:

- under an exclusive lock on a file beside the store (`mlflow.db.lock`, filelock's `FileLock`; sweeps on one
  machine, or on nodes of a file system that has POSIX locks, wait their turn);
- a new store (no file, or an empty one) is built in a temporary file beside it, then renamed into place
  (`os.replace`, atomic): a failure or a kill half-way leaves no half-created store, only a temporary file the
  next creation removes;
- an existing store is opened once, and one MLflow cannot open (not a database, a schema MLflow does not know, a
  file that cannot be read) is refused with one line naming the store and what MLflow said.

While a sweep writes, a store whose write lock another process holds longer than SQLite's wait (another sweep's
long write, a backup) is one the sweep cannot reach (`sqlite_store_locked`): its writes wait in the sweep's queue
as they do for a server that went away (`sentsweep.tracking.writer`), its lock tried before each access
(`sqlite_store_locked`) rather than waited for by MLflow's client (20 s an access, and a logged traceback).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.storage import write_problem

LOCK_SUFFIX = ".lock"


def sqlite_store_path(uri: str) -> Path:
    """The file of a `sqlite:///...` tracking URI, absolute."""
    return Path(uri[len("sqlite:///"):]).expanduser().resolve()


def check_sqlite_store(uri: str, timeout_s: float = 5.0) -> None:
    """Refuse a SQLite store that cannot be used, without creating anything: its folder must exist and take new
    files (a journal beside the store, the lock), and an existing, non-empty store file must open in MLflow (its
    file read within `timeout_s` while another process writes to it)."""
    path = sqlite_store_path(uri)
    if not path.parent.is_dir():
        raise InputError(f"MLflow SQLite store {uri}: folder {path.parent} does not exist")
    problem = write_problem(path.parent)
    if problem:
        raise InputError(f"MLflow SQLite store {uri}: {problem}")
    if _holds_a_store(path):
        with _store_lock(path):
            _check_database(path, uri, timeout_s)
            _open(uri)


def prepare_sqlite_store(uri: str) -> None:
    """Create the SQLite store of `uri` if it does not exist yet (once, atomically, under the lock), else open it
    once under the lock; an `InputError` where MLflow cannot create or open it."""
    path = sqlite_store_path(uri)
    with _store_lock(path):
        if _holds_a_store(path):
            _check_database(path, uri)
            _open(uri)
            return
        for stale in path.parent.glob(f".{path.name}.creating-*"):  # of a creation killed half-way (the lock is ours)
            stale.unlink(missing_ok=True)
        building = path.with_name(f".{path.name}.creating-{os.getpid()}")
        try:
            _open(f"sqlite:///{building}", shown=uri)
            os.replace(building, path)
        except OSError as error:
            raise InputError(f"MLflow SQLite store {uri} cannot be created: {error}") from None
        finally:
            building.unlink(missing_ok=True)


def sqlite_store_locked(uri: str, timeout_s: float = 1.0) -> bool:
    """Whether another process holds the write lock of the SQLite store of `uri` (a long write, a backup reading the
    file: what a read alone would not tell) for longer than `timeout_s`; False where the store file does not exist."""
    path = sqlite_store_path(uri)
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, timeout=timeout_s,
                                                isolation_level=None)) as connection:
            connection.execute("BEGIN EXCLUSIVE")
            connection.execute("ROLLBACK")
    except sqlite3.OperationalError as error:
        return "locked" in str(error)
    except sqlite3.Error:
        return False
    return False


def _holds_a_store(path: Path) -> bool:
    """An existing store file (an empty one, as SQLite leaves where nothing was written, counts as none)."""
    return path.is_file() and path.stat().st_size > 0


@contextlib.contextmanager
def _store_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path`'s lock file (filelock's `FileLock`), held for the block."""
    from filelock import FileLock

    lock = FileLock(path.with_name(path.name + LOCK_SUFFIX))
    try:
        lock.acquire()
    except OSError as error:
        raise InputError(f"MLflow SQLite store sqlite:///{path}: cannot make its lock file ({error})") from None
    try:
        yield
    finally:
        lock.release()


def _check_database(path: Path, uri: str, timeout_s: float = 5.0) -> None:
    """`path` is a SQLite database that can be read (checked with sqlite3 itself, at once: MLflow retries a store
    it cannot connect to for about a minute before it says why)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=timeout_s)) as connection:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        raise InputError(f"MLflow cannot open the SQLite store {uri}: {error}") from None


def _open(uri: str, shown: str | None = None) -> None:
    """Open the store of `uri` as MLflow's client does (creating its tables where it has none), then let its
    connections go; an `InputError` naming `shown` (default `uri`) with MLflow's first line where that fails."""
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    try:  # the artifact root MLflow's client gives a store it opens (its default experiment's, on creation)
        store = SqlAlchemyStore(uri, DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)
    except Exception as error:  # noqa: BLE001 - MLflow, SQLAlchemy, alembic and sqlite3 raise their own types
        message = str(getattr(error, "message", error)).strip().splitlines()
        raise InputError(f"MLflow cannot open the SQLite store {shown or uri}: "
                         f"{message[0] if message else type(error).__name__}") from None
    if shown is not None:  # a store built under another name: its connections go before it is renamed
        store.engine.dispose()
