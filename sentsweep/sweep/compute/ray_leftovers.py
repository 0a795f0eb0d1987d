"""What a stopped sweep's Ray leaves on a machine, found and ended by the next start.

A Ray process is told by the files it holds open under its session's folder (every one of them, the GCS, the
raylet, its agents and workers, writes its logs there; a worker's command line is its task's name,
`ray::ImplicitFunc.train`, so it does not say whose it is). Two kinds of leftovers:

- the local Ray a driver starts itself (`ray.init()` without a cluster): a driver killed with `kill -9` takes its
  GCS and raylet with it, but the raylet's agents (`ray::DashboardAgent`, `ray::RuntimeEnvAgent`) lived on for
  minutes. The driver records its session in its output folder (`record_local_ray`); the next start from that
  folder (`--resume`, or any sweep given the same --output-dir) ends the processes still holding files of a
  session whose driver is gone (`end_left_ray`).
- a SLURM job's Ray (slurm/sweep.sbatch: `ray start` with the temp dir /tmp/ray-JOBID on each node): a job whose
  end the script does not see through (a plain `scancel` or the time limit kill it after SLURM's KillWait) left
  that folder behind. Each job's start, and its end, remove on their node the folders of jobs that are over (this
  job's own at its end and at a requeued run's start), after ending the processes that still hold files there
  (`clean_job_temp_dirs`, run by the script through `python -m sentsweep.sweep.compute.slurm_job clean`).

Only the user's own folders and processes are touched (a root user's job cleans root's), and a process is ended
with SIGTERM, then SIGKILL after `GRACE_S`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

GRACE_S = 5.0
SESSION_RECORD = "ray-session.json"  # in the driver's output folder: the local Ray session it started
JOB_TEMP_DIR = re.compile(r"ray-(\d+)")  # slurm/sweep.sbatch's node-local Ray temp dir, ray-JOBID
ENDED_JOB = "ended"
# squeue's states of a job that is not over (its processes may still be running or about to)
LIVE_JOB_STATES = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED",
                   "REQUEUE_FED", "REQUEUE_HOLD", "SIGNALING", "STAGE_OUT", "STOPPED", "SPECIAL_EXIT"}


def processes_using(folder: Path) -> list[int]:
    """The ids of this user's processes (this one aside) that hold a file open under `folder`, or work in it."""
    prefix = f"{Path(folder).resolve()}/"
    found = []
    for pid in _own_processes():
        try:
            links = [os.readlink(f"/proc/{pid}/cwd")] + [os.readlink(f"/proc/{pid}/fd/{fd}")
                                                          for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:  # gone, or not ours to read
            continue
        if any(f"{link}/".startswith(prefix) for link in links):
            found.append(pid)
    return found


def stop_processes(pids: Iterable[int], grace_s: float = GRACE_S) -> list[int]:
    """SIGTERM to each of `pids`, SIGKILL to those alive `grace_s` later; returns those that were signalled."""
    signalled = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            signalled.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while signalled and time.monotonic() < deadline and any(_alive(pid) for pid in signalled):
        time.sleep(0.2)
    for pid in signalled:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return signalled


def record_local_ray(output_dir: str | Path, session_dir: str) -> None:
    """Note in `output_dir` that this driver started the local Ray session `session_dir`, if it did (its GCS and
    raylet are this process's children; a driver that joined a cluster started none of it)."""
    if not any(_parent(pid) == os.getpid() for pid in processes_using(Path(session_dir))):
        return
    record = Path(output_dir) / SESSION_RECORD
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"driver": os.getpid(), "driver_started": _start_time(os.getpid()),
                                  "session_dir": session_dir}), encoding="utf-8")


def end_left_ray(output_dir: str | Path) -> list[int]:
    """End the processes of the local Ray session a driver that is gone started from `output_dir` (its record,
    `record_local_ray`), and forget the record; returns the ids of the processes ended. A record whose driver
    still runs is left alone: that sweep is not over."""
    record = Path(output_dir) / SESSION_RECORD
    try:
        noted = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    started = noted.get("driver_started")
    if started is not None and _start_time(noted.get("driver", -1)) == started:
        return []
    ended = stop_processes(processes_using(Path(noted["session_dir"])))
    record.unlink(missing_ok=True)
    return ended


def clean_job_temp_dirs(root: Path, this_job: str | None) -> list[str]:
    """Remove the SLURM jobs' Ray temp dirs (ray-JOBID) under `root` whose job is over (this job's own, where given:
    a requeued run starts after its earlier run ended), ending first the processes that hold files there; returns
    what was removed, one line each."""
    removed = []
    for folder in sorted(Path(root).glob("ray-*")):
        match = JOB_TEMP_DIR.fullmatch(folder.name)
        if not match or not folder.is_dir() or folder.is_symlink() or folder.stat().st_uid != os.getuid():
            continue
        job = match.group(1)
        if job != this_job and job_state(job) != ENDED_JOB:
            continue
        ended = stop_processes(processes_using(folder))
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(f"{folder} (job {job}" + (f", {len(ended)} Ray process(es) ended)" if ended else ")"))
    return removed


def job_state(job: str) -> str | None:
    """`ENDED_JOB` for a SLURM job that is over (or unknown to the controller any more), its state while it is not;
    None where squeue cannot tell (no controller answering)."""
    try:
        answer = subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], capture_output=True,
                                text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    state = answer.stdout.strip().splitlines()[0] if answer.stdout.strip() else ""
    if answer.returncode != 0:
        return ENDED_JOB if "Invalid job id" in answer.stderr else None
    return state if state in LIVE_JOB_STATES else ENDED_JOB


def _own_processes() -> list[int]:
    me, uid = os.getpid(), os.getuid()
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def _alive(pid: int) -> bool:
    """Running (a zombie, ended but not yet reaped by its parent, is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return int(stat.read().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot: with the id, it tells a process from a later one that
    got the same id); None where there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return int(stat.read().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None
