"""One driver per sweep: the lock a sweep's driver holds while it runs, in the sweep's storage path.

A sweep is told by its experiment, its sweep name and its storage path (Ray Tune's experiment folders, which a
second driver would fight over): `--resume` continues the latest unfinished run of that sweep in that experiment,
from the Ray Tune state in that storage path, so two drivers with the same three (a second `--resume`, a requeued
SLURM job while the first still runs, a new start beside a running one, which a later `--resume` would take for
the running one) would run the same trials twice. The lock file is `<storage path>/sweep-driver.<experiment>.<sweep>
.lock` (`lock_file`; for storage given as a URI, in the output folder). The driver takes it once every input is
checked (`sentsweep.sweep.launch.launcher`), before it builds or writes anything, writes to MLflow or starts Ray; a
second driver stops there with one line naming the holder (host, process, since when) and exit 2 (`SweepHeld`, an
`InputError`).

The lock is filelock's `SoftFileLock`, not its `FileLock`, for the shared file systems a cluster's storage lives on:

- `SoftFileLock` is the lock file's existence (created with O_CREAT | O_EXCL, atomic on local file systems, NFS v3 on,
  Lustre, GPFS, BeeGFS); `FileLock` is `flock`, which a file system may keep to the node that took it (NFS mounted
  `nolock` or `local_lock=flock`, Lustre's `localflock`, BeeGFS without global locks), where a second driver on
  another node would get the lock too, silently;
- its lock file records the holder's process id and host, which the refusal names; `FileLock` truncates its lock
  file at each attempt, so a record there would be erased by the very driver it is meant for;
- its cost, a lock file left behind by a driver that died, is met by filelock itself: a holder on this host whose
  process is gone (the start time tells a reused process id) is taken over, and the driver says so in one line. A
  holder on another host cannot be proven gone from here: the refusal says which file to remove once it is.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import SoftFileLock, Timeout

from sentsweep.errors import InputError
from sentsweep.storage import local_storage_folder
from sentsweep.terminal import say

# how long a driver tries for the lock: long enough for a holder between creating its lock file and writing its
# record into it, short enough to stop at once
ACQUIRE_TIMEOUT_S = 1.0


class SweepHeld(InputError):
    """Another live driver holds the sweep's lock; the message names it."""


def lock_file(storage_path: str, output_dir: str, experiment: str, sweep: str) -> Path:
    """The lock file of the sweep `sweep` of `experiment` in `storage_path` (in `output_dir` for a URI storage)."""
    folder = local_storage_folder(storage_path) or Path(output_dir).expanduser().resolve()
    names = [re.sub(r"[^A-Za-z0-9._-]", "_", name) for name in (experiment, sweep)]
    return folder / f"sweep-driver.{names[0]}.{names[1]}.lock"


def read_holder(path: Path) -> tuple[int, str, float] | None:
    """(process id, host, since: the lock file's time) of the lock's holder as its file records it; None where there
    is no lock file or no complete record in it (filelock's record: the process id, then the host, a line each)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        since = path.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 2 or not lines[0].isdigit():
        return None
    return int(lines[0]), lines[1], since


def describe_holder(holder: tuple[int, str, float] | None) -> str:
    """'pid 1234 on host node1 since 2026-11-29 01:23:45 UTC' (or what is known of it)."""
    if holder is None:
        return "a driver whose record is not written yet"
    pid, host, since = holder
    return f"pid {pid} on host {host} since {time.strftime('%Y-%m-%d %H:%M:%S %Z', time.localtime(since))}"


def _gone_from_this_host(holder: tuple[int, str, float] | None) -> bool:
    """Whether `holder` ran on this host and its process no longer exists."""
    if holder is None or holder[1].split("?", 1)[0] != socket.gethostname():
        return False
    try:
        os.kill(holder[0], 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@contextlib.contextmanager
def driver_lock(path: Path, sweep: str) -> Iterator[None]:
    """Hold the lock of the sweep (`lock_file`) for the block; `SweepHeld` naming the holder where another live
    driver holds it. A lock whose holder's process is gone from this host is taken over, in one line saying so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = read_holder(path)
    lock = SoftFileLock(str(path), timeout=ACQUIRE_TIMEOUT_S)
    try:
        lock.acquire()
    except Timeout:
        holder = read_holder(path) or before
        remove = (f"; if that process is gone from {holder[1]}, remove {path}" if holder is not None
                  else f" (lock {path})")
        raise SweepHeld(f"sweep {sweep} is run by another driver: {describe_holder(holder)}; wait for it to "
                        f"end{remove}") from None
    if before is not None and before[0] != os.getpid() and _gone_from_this_host(before):
        say(f"took over the lock of sweep {sweep} ({path}) from {describe_holder(before)}, whose process is gone")
    try:
        yield
    finally:
        lock.release()
