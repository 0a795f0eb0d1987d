"""A sweep whose storage fails stops resumably, as one whose MLflow store stays away does (exit 3, the command that
finishes it).

A full disk (`OSError` ENOSPC) or a folder the sweep writes removed while its trials run (told by the mark file
`WATCH_MARK` left in it as the stage starts) fails every trial that meets it, and every retry. `StorageWatch`
(installed by `watch_storage` around Ray Tune's handling of a trial failure) sees the first such failure, prints
one line naming the folder, leaves the trial unretried and interrupts the Ray Tune run as Ctrl-C does; the runner
then stops the sweep (`StorageFault`, `stop_for_storage`: runs ended KILLED, the unfinished points named, the
command that finishes it printed, exit `STORAGE_FAULT_EXIT_CODE`). A grid stage resumed without its saved Ray Tune
state runs only its points without a finished run (`points_left_without_state`). What the user sees:
docs/fault_tolerance.md, "A full disk, a folder removed".

    storage_fault(OSError(errno.ENOSPC, "No space left on device"), sweep_folders(out, storage))
    # 'no space left on the disk of ...; stopping the sweep'
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

from sentsweep.search_spaces.param_spaces import grid_points
from sentsweep.storage import local_storage_folder, nearest_existing_folder
from sentsweep.sweep.execution.deterministic_failures import leave_unretried
from sentsweep.sweep.search.target_tasks import settings_by_task
from sentsweep.sweep.search.trials import settings_by_method, stage_constants
from sentsweep.terminal import say

WATCH_MARK = ".sentsweep-watched"  # left in each folder a sweep writes, to tell it was removed (`removed_folder`)
NO_SPACE_TEXT = "No space left on device"  # strerror(ENOSPC), also in the messages of errors that carry no errno


STORAGE_FAULT_EXIT_CODE = 3  # as MLflow unreachable past --mlflow-wait: stopped resumably, --resume finishes it


class StorageFault(Exception):
    """The sweep's storage failed (a full disk, a folder removed); the message names the folder in one line.
    `points`: the stage's (configuration, seed) points left unfinished; `failed`: the ids of the trials it failed."""

    def __init__(self, message: str, points: list[str] = (), failed: list[str] = ()) -> None:
        super().__init__(message)
        self.points, self.failed = list(points), list(failed)


def storage_fault(error: BaseException, folders: list[Path], checkpoint: Path | None = None) -> str | None:
    """What storage fault caused `error` (a trial's failure as Ray Tune's controller gets it, or the driver's own
    error), in one line; None when it is none. `folders`: the folders the sweep writes, each of which must exist;
    `checkpoint`: the trial's last checkpoint, whose size a full disk's line gives."""
    for cause in _causes(error):
        if isinstance(cause, OSError) and (cause.errno == errno.ENOSPC or NO_SPACE_TEXT in str(cause)):
            return no_space_line(Path(cause.filename) if cause.filename else folders[-1], checkpoint)
    if NO_SPACE_TEXT in str(error):
        return no_space_line(folders[-1], checkpoint)
    gone = removed_folder(folders)
    return None if gone is None else f"the folder {gone} was removed while the sweep ran"


def mark_folders(folders: list[Path]) -> None:
    """Leave a `WATCH_MARK` file in each of `folders` (made where missing), for `removed_folder`."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / WATCH_MARK).touch()


def removed_folder(folders: list[Path]) -> Path | None:
    """The first of `folders` removed since `mark_folders`: its mark gone (Ray Tune makes the folders it writes to
    again, so the folder itself may be back, empty but for what Ray Tune wrote since)."""
    return next((folder for folder in folders if not (folder / WATCH_MARK).exists()), None)


def no_space_line(folder: Path, checkpoint: Path | None) -> str:
    """A full disk in one line: the folder, its free space and, where known, what a checkpoint of the trial takes."""
    free = shutil.disk_usage(nearest_existing_folder(folder)).free
    size = _folder_bytes(checkpoint) if checkpoint is not None and checkpoint.is_dir() else None
    need = f"; a checkpoint of this trial takes {_size(size)}" if size else ""
    return f"no space left on the disk of {folder} ({_size(free)} free{need})"


class StorageWatch:
    """The storage faults of one Ray Tune run (see the module docstring): `message` is the first one's line, `failed`
    the ids of the trials they failed, `trials` the run's trials (to name those left unfinished)."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders
        self.message: str | None = None
        self.failed: list[str] = []
        self.trials: list = []
        mark_folders(folders)

    def after_run(self, results) -> None:
        """The Ray Tune run ended with `results` (its `ResultGrid`): a folder removed while it ran, with no trial
        failure to tell it (the trials had handed their last checkpoint over), is a storage fault too."""
        gone = removed_folder(self.folders) if self.message is None else None
        if gone is not None:
            self.message = f"the folder {gone} was removed while the sweep ran"
            self.trials = [SimpleNamespace(trial_id=result.metrics.get("trial_id"), config=result.config or {})
                           for result in results]
            print(f"error: {self.message}; stopping the sweep", file=sys.stderr, flush=True)

    def notice(self, controller, trial, exception: BaseException) -> bool:
        """Whether a storage fault failed `trial`; the first one is said and interrupts the run."""
        checkpoint = getattr(trial.checkpoint, "path", None)
        message = storage_fault(exception, self.folders, Path(checkpoint) if checkpoint else None)
        if message is None:
            return False
        self.failed.append(trial.trial_id)
        if self.message is None:
            self.message = message
            self.trials = controller.get_trials()
            print(f"error: {message}; stopping the sweep", file=sys.stderr, flush=True)
            # the other trials meet the fault too, and their errors, never fetched once the run stops, would each
            # be printed with its traceback by Ray's handler of unfetched errors
            os.environ["RAY_IGNORE_UNHANDLED_ERRORS"] = "1"
            signal.raise_signal(signal.SIGINT)  # Ray Tune's handler: its trials stopped, its state saved
        return True

    def unfinished(self, finished: set[str]) -> list[dict]:
        """The configs of the run's trials that did not finish (`finished`: the ids of those whose runs did)."""
        return [trial.config for trial in self.trials if trial.trial_id not in finished]


def sweep_folders(output_dir: str, storage_path: str | None, experiment_path: str | None = None) -> list[Path]:
    """The folders a sweep writes and needs to stay: the output folder, the local storage path and a stage's
    experiment folder in it (storage given as a URI is not watched)."""
    storage = local_storage_folder(storage_path)
    folders = [Path(output_dir).expanduser().absolute()]
    if storage is not None:
        folders += [storage] + ([storage / Path(experiment_path).name] if experiment_path else [])
    return folders


_active: list[StorageWatch] = []


def watch_storage(watch: StorageWatch):
    """Make `watch` see the trial failures of the Ray Tune run that follows (until `stop_watching`): a failure it
    takes for a storage fault is handled as if the trial's `max_failures` were 0 (`leave_unretried`)."""
    _active[:] = [watch]
    leave_unretried("storage", lambda controller, trial, exception: bool(_active)
                    and _active[0].notice(controller, trial, exception))


def stop_watching() -> None:
    """The Ray Tune run ended: no watch sees failures until the next `watch_storage`."""
    _active.clear()


def unfinished_points(configs: list[dict], axes: list[str]) -> list[str]:
    """Each unfinished trial as its (configuration, seed) point: `axis=value, ... seed N`."""
    points = []
    for config in configs:
        values = ", ".join(f"{axis}={config.get(axis)}" for axis in axes if axis in config)
        points.append(f"{values}{' ' if values else ''}seed {config.get('seed')}")
    return list(dict.fromkeys(points))


def stop_for_storage(tracker, fault: StorageFault, end_stopped, resume: str) -> int:
    """Stop the sweep for `fault`: the runs of the trials it failed end KILLED (tag `interrupted`) as the stopped
    trials' do (`end_stopped(tracker)`: (trials, what became of the runs)), the unfinished points and `resume` are
    printed; returns `STORAGE_FAULT_EXIT_CODE`."""
    for trial_id in fault.failed:
        tracker.writer.submit({"op": "tag", "trial": trial_id, "key": "interrupted", "value": "true"})
        tracker.writer.submit({"op": "terminate", "trial": trial_id, "status": "KILLED"})
    _, ended = end_stopped(tracker)
    points = "".join(f"\n  {point}" for point in fault.points)
    unfinished = f"\nunfinished (configuration, seed) points of the stage:{points}" if points else ""
    print(f"\nerror: {fault}: the sweep stopped; {ended}{unfinished}\nonce there is room, or the folder is back, "
          f"finish the sweep with:\n  {resume}", file=sys.stderr)
    return STORAGE_FAULT_EXIT_CODE


def points_left_without_state(runner, tracker, run_name: str, constants: dict, axes: dict):
    """On --resume, a grid stage of `runner` (`SweepRunner`) whose saved Ray Tune state is gone (its folder removed)
    while some of its points finished: (its constants, the points left, which the runner runs as --extend runs its
    points); None where its state is there or none of its points finished (the stage runs as a grid, restorable
    under `run_name`)."""
    from ray import tune

    if not runner.options.resume or tune.Tuner.can_restore(f"{runner.storage_path.rstrip('/')}/{run_name}"):
        return None
    method_settings = runner.resolved.method_settings
    constants = stage_constants(constants, axes, method_settings)
    points = grid_points(axes, runner.seeds, settings_by_method(constants, axes, method_settings),
                         settings_by_task(runner.resolved.task_data, axes))
    left = runner.points_not_finished(tracker, constants, points)
    if len(left) == len(points):
        return None
    say(f"--resume: the stage's saved Ray Tune state is gone; {len(points) - len(left)} of its {len(points)} trials "
        f"finished before, {len(left)} to run")
    return constants, left


def _causes(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = getattr(error, "cause", None) or error.__cause__ or error.__context__


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _size(count: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} TB"
