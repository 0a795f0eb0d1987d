"""slurm/sweep.sbatch's helpers, without a SLURM: the resume line rebuilt from a job's record (SLURM 22.05's
`scontrol show job -o`, as this machine's SLURM writes it) or taken from its submission line, and the leftovers of
a stopped sweep's Ray, found by the files they hold and ended by the next start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sentsweep.sweep.compute import slurm_job
from sentsweep.sweep.compute.ray_leftovers import SESSION_RECORD, clean_job_temp_dirs, end_left_ray, processes_using
from sentsweep.sweep.compute.slurm_job import parse_record, resume_line, submit_options

# `scontrol show job -o 2` of SLURM 22.05 (Debian 12) for `sbatch --time=30 --output=... slurm/sweep.sbatch ...`
RECORD_22_05 = (
    "JobId=2 JobName=sentsweep UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 Nice=0 "
    "Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 "
    "BatchFlag=1 Reboot=0 ExitCode=137:0 RunTime=00:02:50 TimeLimit=00:30:00 TimeMin=N/A "
    "SubmitTime=2026-11-26T00:49:59 Partition=debug AllocNode:Sid=localhost:5989 ReqNodeList=(null) "
    "ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=2,node=1,billing=2 Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 "
    "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=NO Contiguous=0 Licenses=(null) "
    "Network=(null) Command=/work/sentsweep/slurm/sweep.sbatch sweeps/nm_weight.py --quick --max-steps 200 "
    "WorkDir=/work/sentsweep StdErr=/work/logs/b.out StdIn=/dev/null StdOut=/work/logs/b.out Power= ")


def test_a_jobs_record_is_read_field_by_field_blanks_in_its_command_included():
    record = parse_record(RECORD_22_05)
    assert record["Command"] == "/work/sentsweep/slurm/sweep.sbatch sweeps/nm_weight.py --quick --max-steps 200"
    assert (record["NumNodes"], record["TimeLimit"], record["ReqB:S:C:T"], record["Power"]) == \
        ("1", "00:30:00", "0:0:*:*", "")


def test_without_a_submission_line_the_options_are_rebuilt_from_the_record():
    assert submit_options(parse_record(RECORD_22_05)) == [
        "--nodes=1", "--time=00:30:00", "--partition=debug", "--job-name=sentsweep", "--output=/work/logs/b.out"]
    gpus = parse_record(RECORD_22_05.replace("NumNodes=1", "NumNodes=2 TresPerNode=gres:gpu:4")
                        .replace("StdOut=/work/logs/b.out", "StdOut=/work/sentsweep/sentsweep-2.out"))
    # the script's default log name holds the job's id: the new job makes its own
    assert submit_options(gpus) == ["--nodes=2", "--time=00:30:00", "--partition=debug", "--job-name=sentsweep",
                                    "--gres=gpu:4"]


def test_a_submission_line_slurm_kept_gives_the_options_as_typed():
    record = parse_record(RECORD_22_05.replace(" Power= ", " Power= SubmitLine=sbatch -N 2 --time 8:00:00 "
                                               "--qos=long slurm/sweep.sbatch sweeps/nm_weight.py --quick"))
    assert submit_options(record) == ["-N", "2", "--time", "8:00:00", "--qos=long"]


def test_the_resume_line_repeats_the_options_and_hides_credentials(monkeypatch):
    monkeypatch.setattr(slurm_job, "job_record", lambda job: parse_record(RECORD_22_05))
    monkeypatch.setattr(slurm_job, "accounting_submit_line", lambda job: None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://alice:s3cret@mlflow.lab:5000")
    line = resume_line("2", "/work/out dir", ["sweeps/nm_weight.py", "--quick", "--max-steps", "200"])
    assert line == ("SENTSWEEP_OUTPUT_DIR='/work/out dir' MLFLOW_TRACKING_URI=http://alice:***@mlflow.lab:5000 "
                    "sbatch --nodes=1 --time=00:30:00 --partition=debug --job-name=sentsweep "
                    "--output=/work/logs/b.out slurm/sweep.sbatch sweeps/nm_weight.py --quick --max-steps 200 --resume")


def _holding(path: Path) -> subprocess.Popen:
    """A process that holds `path` open (as a Ray process holds its logs), until it is ended."""
    path.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([sys.executable, "-c", "import sys, time; handle = open(sys.argv[1], 'a'); "
                                "print('open', flush=True); time.sleep(600)", str(path)], stdout=subprocess.PIPE)
    assert process.stdout.readline() == b"open\n"
    return process


def _gone_process() -> tuple[int, int]:
    """(id, start time) of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid, 0


def test_the_next_start_ends_the_ray_processes_a_killed_driver_left(tmp_path):
    session = tmp_path / "ray" / "session_2026-11-26_00-00-00_000000_1"
    agent = _holding(session / "logs" / "dashboard_agent.log")
    bystander = _holding(tmp_path / "other-session" / "logs" / "raylet.out")
    output = tmp_path / "out"
    output.mkdir()
    driver, started = _gone_process()
    (output / SESSION_RECORD).write_text(json.dumps({"driver": driver, "driver_started": started,
                                                     "session_dir": str(session)}))
    try:
        assert processes_using(session) == [agent.pid]
        assert end_left_ray(output) == [agent.pid]
        assert agent.wait(timeout=30) is not None and bystander.poll() is None
        assert not (output / SESSION_RECORD).exists()
    finally:
        for process in (agent, bystander):
            process.kill()
            process.wait()


def test_a_session_whose_driver_still_runs_is_left_alone(tmp_path):
    session = tmp_path / "session"
    worker = _holding(session / "logs" / "worker.out")
    with open(f"/proc/{os.getpid()}/stat") as stat:
        started = int(stat.read().rpartition(")")[2].split()[19])
    (tmp_path / SESSION_RECORD).write_text(json.dumps({"driver": os.getpid(), "driver_started": started,
                                                       "session_dir": str(session)}))
    try:
        assert end_left_ray(tmp_path) == [] and worker.poll() is None
    finally:
        worker.kill()
        worker.wait()


def test_the_temp_dirs_of_jobs_that_are_over_are_removed_with_their_processes(tmp_path, monkeypatch):
    """squeue (here a stand-in answering as SLURM 22.05 does) says job 11 is unknown, 12 runs and 13 completed;
    14 is this job (a requeued run starting)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text("#!/bin/sh\ncase \"$*\" in\n"
                                    "  *' 11 '*) echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1;;\n"
                                    "  *' 12 '*) echo RUNNING;;\n  *) echo COMPLETED;;\nesac\n")
    (bin_dir / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    root = tmp_path / "tmp"
    for job in (11, 12, 13, 14):
        (root / f"ray-{job}" / "session_latest").mkdir(parents=True)
    (root / "ray-other").mkdir()
    straggler = _holding(root / "ray-11" / "session_latest" / "worker.out")
    running = _holding(root / "ray-12" / "session_latest" / "raylet.out")
    try:
        removed = clean_job_temp_dirs(root, "14")
        assert removed == [f"{root / 'ray-11'} (job 11, 1 Ray process(es) ended)", f"{root / 'ray-13'} (job 13)",
                           f"{root / 'ray-14'} (job 14)"]
        assert sorted(path.name for path in root.iterdir()) == ["ray-12", "ray-other"]
        assert straggler.wait(timeout=30) is not None and running.poll() is None
    finally:
        for process in (straggler, running):
            process.kill()
            process.wait()
