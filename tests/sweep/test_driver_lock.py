"""One driver per sweep (sentsweep.sweep.execution.driver_lock): a lock held by a live driver refuses a second one in
one line naming the holder; a lock whose driver died on this host is taken over, saying so; one of another host is named
with the file to remove. Two sweeps concurrently resumed for real: tests/sweep/test_fault_matrix.py (the TWICE
cases)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sentsweep.sweep.execution.driver_lock import SweepHeld, driver_lock, lock_file, read_holder
from tests.helpers.cluster_helpers import PROJECT

HOLD = ("import sys, time\nfrom pathlib import Path\nfrom sentsweep.sweep.execution.driver_lock import driver_lock\n"
        "with driver_lock(Path(sys.argv[1]), 'nm_weight'):\n    print('held', flush=True)\n    time.sleep(120)\n")


def _holder(path: Path) -> subprocess.Popen:
    """Another process holding the lock at `path` (a driver), once it says so."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True,
                               cwd=PROJECT)
    assert process.stdout.readline() == "held\n"
    return process


def test_a_second_driver_is_refused_in_one_line_naming_the_holder(tmp_path):
    path = lock_file(str(tmp_path / "ray"), str(tmp_path), "nm_weight", "nm_weight")
    holder = _holder(path)
    try:
        with pytest.raises(SweepHeld) as refused, driver_lock(path, "nm_weight"):
            pytest.fail("a second driver got the lock")
        pid, host, _ = read_holder(path)
        assert (pid, host) == (holder.pid, socket.gethostname())
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(f"sweep nm_weight is run by another driver: pid {holder.pid} on host {host} since ")
        assert message.endswith(f"; wait for it to end; if that process is gone from {host}, remove {path}")
        assert path.exists()  # the holder's lock is left as it was
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_of_a_driver_that_died_on_this_host_is_taken_over_saying_so(tmp_path, capsys):
    path = lock_file(str(tmp_path / "ray"), str(tmp_path), "nm_weight", "nm_weight")
    holder = _holder(path)
    holder.send_signal(signal.SIGKILL)  # as `kill -9` leaves it: the lock file stays
    holder.wait()
    assert read_holder(path)[0] == holder.pid
    with driver_lock(path, "nm_weight"):
        assert read_holder(path)[0] != holder.pid
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 1 and said[0].startswith(f"took over the lock of sweep nm_weight ({path}) from pid "
                                                 f"{holder.pid} on host ")
    assert said[0].endswith(", whose process is gone")
    assert not path.exists()  # released at the block's end
    with driver_lock(path, "nm_weight"):  # and taken again without a word
        pass
    assert capsys.readouterr().out == ""


def test_a_lock_held_on_another_host_is_refused_naming_that_host(tmp_path):
    path = lock_file(str(tmp_path / "ray"), str(tmp_path), "nm_weight", "nm_weight")
    path.parent.mkdir(parents=True)
    path.write_text("4242\nnode-17\n")  # filelock's record: the process id, then the host
    with pytest.raises(SweepHeld, match=rf"^sweep nm_weight is run by another driver: pid 4242 on host node-17 "
                                        rf"since .*; if that process is gone from node-17, remove {path}$"):
        with driver_lock(path, "nm_weight"):
            pass
    assert path.read_text() == "4242\nnode-17\n"


def test_the_lock_is_released_when_the_driver_fails(tmp_path):
    path = lock_file(str(tmp_path / "ray"), str(tmp_path), "nm_weight", "nm_weight")
    with pytest.raises(RuntimeError), driver_lock(path, "nm_weight"):
        raise RuntimeError("a bug")
    assert not path.exists()


def test_a_sweep_is_its_experiment_its_name_and_its_storage_path(tmp_path):
    first = lock_file(str(tmp_path / "ray"), str(tmp_path), "nm_weight", "nm_weight")
    assert first == tmp_path / "ray" / "sweep-driver.nm_weight.nm_weight.lock"
    assert lock_file(str(tmp_path / "ray"), str(tmp_path / "other"), "nm_weight", "nm_weight") == first
    assert lock_file(str(tmp_path / "ray"), str(tmp_path), "mine", "nm_weight") != first
    assert lock_file(str(tmp_path / "ray2"), str(tmp_path), "nm_weight", "nm_weight") != first
    # storage given as a URI holds no lock: the output folder does
    assert lock_file("s3://bucket/ray", str(tmp_path), "my exp", "nm_weight") == (
        tmp_path / "sweep-driver.my_exp.nm_weight.lock")
    with driver_lock(first, "nm_weight"), driver_lock(lock_file(str(tmp_path / "ray"), str(tmp_path), "mine",
                                                                "nm_weight"), "nm_weight"):
        pass  # two sweeps, two locks
