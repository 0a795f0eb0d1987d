"""Room for a sweep's outputs, checked before launch: a full disk and a read-only output folder are refused in
one line before anything is built, and the checkpoint a trial writes fits the size the check counts for it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.sweep.launch.disk_space import CHECKPOINT_MODEL_COPIES, model_weight_bytes
from sentsweep.trainables.catalog import get_method, resolve_trial
from sentsweep.trainables.loop import CHECKPOINT_FILE
from sentsweep.trainables.session import LocalSession


@pytest.fixture()
def small_mount(tmp_path):
    """Mount a tmpfs of a given size and options at a folder of tmp_path (root only: skipped elsewhere): a real full
    disk or read-only file system."""
    mounted = []

    def mount(options: str) -> Path:
        folder = tmp_path / f"mount-{len(mounted)}"
        folder.mkdir()
        if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                                               capture_output=True).returncode != 0:
            pytest.skip("mounting a tmpfs needs root")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_is_refused_before_anything_is_written(run_quick, small_mount, tiny_model_dir):  # noqa: F811
    disk = small_mount("size=2m")
    (disk / "earlier-results.txt").write_text("kept")
    code, err = run_quick("--storage-path", str(disk / "ray"), "--model", str(tiny_model_dir))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    checkpoint = CHECKPOINT_MODEL_COPIES * model_weight_bytes(str(tiny_model_dir))
    assert "error: not enough free disk for the sweep: it keeps about " in err
    assert f"{disk / 'ray'}: 8 trials' checkpoints of about {checkpoint / 1024:.1f} KiB and 8 more while its " \
           "largest stage runs" in err and "are free there" in err
    assert sorted(path.name for path in disk.iterdir()) == ["earlier-results.txt"]


def test_a_read_only_output_folder_is_refused(run_quick, small_mount, tmp_path):  # noqa: F811
    read_only = small_mount("ro,size=1m")
    code, err = run_quick("--storage-path", str(read_only / "ray"))
    assert code == 2 and err.strip() == (f"error: --storage-path {read_only / 'ray'}: {read_only} is not writable "
                                         "(Read-only file system)")


def test_an_output_folder_inside_a_file_is_refused(run_quick, tmp_path):  # noqa: F811
    (tmp_path / "a-file").write_text("x")
    code, err = run_quick("--storage-path", str(tmp_path / "a-file" / "ray"))
    assert code == 2 and err.strip() == f"error: --storage-path {tmp_path / 'a-file' / 'ray'}: " \
                                        f"{tmp_path / 'a-file'} is a file, not a folder"


@pytest.mark.parametrize("method", [
    dict(method="tsdae", noise_type="delete", noise_ratio=0.6, tie_decoder=False),  # encoder + decoder
    dict(method="ct"),  # two encoders
])
def test_a_trials_checkpoint_fits_the_size_the_check_counts(tiny_model_dir, method):
    """The largest checkpoints of the built-in methods, written for real on the tiny BERT: within
    CHECKPOINT_MODEL_COPIES times its weights (the measure the check scales to the sweep's own model)."""
    session = LocalSession()
    config = dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                  test_file=str(DEMO_DIR / "sts-test.csv"), eval_format="stsb", lr=1e-3, batch_size=8, max_steps=2,
                  eval_steps=1, max_seq_length=32, seed=0, pooling="cls") | method
    get_method(config["method"]).run(resolve_trial(config), session)
    checkpoint = (session.checkpoint_dir / CHECKPOINT_FILE).stat().st_size
    weights = model_weight_bytes(str(tiny_model_dir))
    assert 0 < checkpoint <= CHECKPOINT_MODEL_COPIES * weights, (checkpoint, weights)
