"""The libraries' own output while a sweep runs: held back unless --verbose, errors always shown.

The quiet default is set through the libraries' own settings, not by filtering their text: Ray Tune's verbosity
0 (`tune_verbosity`), the "ray" logger at WARNING (`ray_logging_level`), the environment settings of
`QUIET_SETTINGS` and the levels of `QUIET_LOGGERS` (`library_output`), whose start-up lines (Ray's token
authentication notice, MLflow creating a new store's tables) say nothing about the sweep; errors always pass. The
trials' own output (their prints, transformers' progress bars) never reaches the driver: the runner starts Ray with
log_to_driver=False. The module imports none of those libraries, so that a `--dry-run` or a refused input that
holds their output back loads none of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

# Read by Ray Tune and MLflow from the environment when a run starts (a value the user set is kept).
QUIET_SETTINGS = {
    # Ray Tune's legacy output engine, silent at verbosity 0; its newer engine still prints, at verbosity 0, a
    # configuration box, the results folder and the TensorBoard hint for each run, and a result box for each
    # failed trial (ray/tune/experimental/output.py).
    "RAY_AIR_NEW_OUTPUT": "0",
    # no traceback logged for each failed attempt of a trial: SweepProgress prints its reason, MLflow keeps the
    # whole traceback (tag failure_reason) and Ray Tune its error file
    "TUNE_PRINT_ALL_TRIAL_ERRORS": "0",
    # no warning that the experiment state is saved often: CheckpointConfig(num_to_keep=2) forces those saves on
    # purpose (see sentsweep.sweep.execution.stage_tune)
    "TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S": "0",
    # no "View run ... at" / "View experiment at" lines each time a trial's run ends on an MLflow server
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


def tune_verbosity(verbose: bool) -> int:
    """Ray Tune's `RunConfig(verbose=...)`: 1 (its trial tables and boxes) with --verbose, else 0 (silent)."""
    return 1 if verbose else 0


def ray_logging_level(verbose: bool) -> int:
    """The driver's "ray" logger level for `ray.init`: INFO with --verbose, else WARNING (warnings and errors)."""
    return logging.INFO if verbose else logging.WARNING


# Loggers whose start-up lines say nothing about the sweep, and the level they are held at while it runs (unless
# --verbose): warnings of these pass only when they are errors, INFO lines only when they are warnings.
QUIET_LOGGERS = {
    # "Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out..." as every
    # local Ray starts (ray/_private/authentication/authentication_token_setup.py)
    "ray._private.authentication.authentication_token_setup": logging.ERROR,
    # "Creating initial MLflow database tables..." and alembic's migration lines as a new SQLite store is made
    "mlflow.store.db.utils": logging.WARNING,
    "alembic": logging.WARNING,
    # "The `process_trial_result` operation took 0.54 s, which may be a performance bottleneck", Ray Tune timing
    # its own loop (ray/tune/utils/util.py, warn_if_slow): on a busy machine, several lines at a time
    "ray.tune.utils.util": logging.ERROR,
    # "Experiment has been interrupted, but the most recent state was saved. Resume experiment with:
    # Tuner.restore(...)" as an interrupted Ray Tune run ends (ray/tune/tune.py), and its "Stop signal received"
    # before: the driver prints its own line and the sweep's --resume command
    "ray.tune.tune": logging.ERROR,
}


@contextmanager
def library_output(verbose: bool) -> Iterator[None]:
    """Ray Tune's and MLflow's quiet settings (`QUIET_SETTINGS`) and the libraries' start-up lines held back
    (`QUIET_LOGGERS`) for the time of a sweep, unless --verbose; the environment and the loggers' levels are put
    back as they were afterwards. Errors are always shown."""
    added = {} if verbose else {name: value for name, value in QUIET_SETTINGS.items() if name not in os.environ}
    os.environ.update(added)
    levels = {} if verbose else {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    for name in levels:
        logging.getLogger(name).setLevel(max(QUIET_LOGGERS[name], logging.getLogger(name).getEffectiveLevel()))
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
