"""A storage fault (a full disk, a folder removed) told from the other failures of a trial or the driver
(sentsweep.sweep.execution.storage_faults); the fault matrix (tests/sweep/test_fault_matrix.py) stops sweeps with them
and
resumes."""

import errno
import os
import shutil
from collections import Counter
from types import SimpleNamespace

import pytest

from sentsweep.faults import fault_point
from sentsweep.sweep.execution.storage_faults import (
    WATCH_MARK,
    StorageWatch,
    mark_folders,
    storage_fault,
    sweep_folders,
    unfinished_points,
)


class RayTaskError(Exception):
    """As Ray hands a trial's failure to Tune's controller: the trial's own error as `cause`."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"ray::ImplicitFunc.train() {cause}")
        self.cause = cause


def test_a_full_disk_is_named_with_its_folder_its_free_space_and_a_checkpoints_size(tmp_path):
    checkpoint = tmp_path / "checkpoint_000001"
    checkpoint.mkdir()
    (checkpoint / "state.pt").write_bytes(b"x" * 3000)
    error = RayTaskError(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path)))
    line = storage_fault(error, [tmp_path], checkpoint)
    assert line.startswith(f"no space left on the disk of {tmp_path} (")
    assert line.endswith(" free; a checkpoint of this trial takes 2.9 kB)")


def test_a_full_disk_said_only_in_words_is_one_too(tmp_path):
    """pyarrow's copy of a checkpoint to storage raises an OSError whose errno is not set."""
    error = RayTaskError(OSError("error writing to file: No space left on device"))
    assert storage_fault(error, [tmp_path]).startswith(f"no space left on the disk of {tmp_path} (")


def test_a_folder_removed_is_named_whatever_the_trial_failed_with_also_once_made_again(tmp_path):
    output = tmp_path / "out"
    folders = sweep_folders(str(output), str(output / "ray"), str(output / "ray" / "sweep-0"))
    mark_folders(folders)
    refused = RayTaskError(ValueError("model path 'out/tiny-bert' does not exist"))
    assert storage_fault(refused, folders) is None  # every folder there: the trial's own failure
    shutil.rmtree(output)
    (output / "ray" / "sweep-0").mkdir(parents=True)  # as Ray Tune makes it again to save its state
    assert storage_fault(refused, folders) == f"the folder {output} was removed while the sweep ran"


@pytest.mark.parametrize("error", [RayTaskError(FloatingPointError("non-finite loss")), RuntimeError("CUDA error"),
                                   RayTaskError(OSError(errno.EIO, "Input/output error"))])
def test_other_failures_are_no_storage_fault(tmp_path, error):
    mark_folders([tmp_path])
    assert storage_fault(error, [tmp_path]) is None


def test_the_first_storage_fault_is_said_once_and_interrupts_the_run(tmp_path, capsys, monkeypatch):
    interrupts = []
    monkeypatch.setattr("signal.raise_signal", interrupts.append)
    monkeypatch.setenv("RAY_IGNORE_UNHANDLED_ERRORS", "")  # (put back as it was after the test)
    monkeypatch.delenv("RAY_IGNORE_UNHANDLED_ERRORS")
    trials = [SimpleNamespace(trial_id=f"t{index}", checkpoint=None, config={"noise_ratio": 0.3, "seed": index})
              for index in range(3)]
    controller = SimpleNamespace(get_trials=lambda: trials)
    watch = StorageWatch([tmp_path / "gone"])
    (tmp_path / "gone" / WATCH_MARK).unlink()
    assert watch.notice(controller, trials[0], RayTaskError(FileNotFoundError("checkpoint_000001")))
    assert watch.notice(controller, trials[1], RayTaskError(FileNotFoundError("checkpoint_000001")))
    assert capsys.readouterr().err == f"error: the folder {tmp_path / 'gone'} was removed while the sweep ran; " \
                                      "stopping the sweep\n"
    assert len(interrupts) == 1 and watch.failed == ["t0", "t1"]
    assert unfinished_points(watch.unfinished({"t2"}), ["noise_ratio"]) == ["noise_ratio=0.3 seed 0",
                                                                             "noise_ratio=0.3 seed 1"]


def test_the_fault_points_full_disk_and_removed_folder(tmp_path, monkeypatch):
    monkeypatch.setattr("sentsweep.faults._reached", Counter())
    monkeypatch.setenv("SENTSWEEP_FAULT", "checkpoint:0:ENOSPC:2")
    fault_point("checkpoint", 0, str(tmp_path))  # the first checkpoint: written
    with pytest.raises(OSError) as raised:
        fault_point("checkpoint", 0, str(tmp_path))
    assert (raised.value.errno, raised.value.filename) == (errno.ENOSPC, str(tmp_path))
    (tmp_path / "out").mkdir()
    monkeypatch.setenv("SENTSWEEP_FAULT", "trial:0:GONE")
    monkeypatch.setenv("SENTSWEEP_FAULT_FOLDER", str(tmp_path / "out"))
    fault_point("trial", 0)
    assert not (tmp_path / "out").exists()
