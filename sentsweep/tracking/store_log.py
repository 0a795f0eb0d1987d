"""Where MLflow's and SQLAlchemy's own reports of a store fault go while a sweep runs (a locked SQLite file, a lost
connection: the tracebacks their loggers write): not to the terminal, where the driver says in one line what it does
about the fault (waits for the store, queues its writes, stops: `sentsweep.tracking.writer`), but whole, tracebacks
included, to the sweep's store log, `OUTPUT_DIR/mlflow-store.log` (`STORE_LOG`), written only when there is one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

STORE_LOG = "mlflow-store.log"
STORE_LOGGERS = ("mlflow.store", "sqlalchemy")  # MLflow's stores (and their database utilities), SQLAlchemy's


@contextlib.contextmanager
def store_reports_logged(output_dir: str | Path) -> Iterator[Path]:
    """For the block, the records of `STORE_LOGGERS` go to `output_dir`/`STORE_LOG` alone (the file made at the
    first); yields the file's path."""
    path = Path(output_dir).expanduser().absolute() / STORE_LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
    loggers = [logging.getLogger(name) for name in STORE_LOGGERS]
    propagated = [logger.propagate for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield path
    finally:
        for logger, propagate in zip(loggers, propagated):
            logger.removeHandler(handler)
            logger.propagate = propagate
        handler.close()
