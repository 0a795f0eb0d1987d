"""What slurm/sweep.sbatch asks of sentsweep inside a job: the line that resumes the job with every option it was
submitted with, the removal of Ray's node-local leftovers, and URIs with their credentials hidden.

    python -m sentsweep.sweep.compute.slurm_job resume-line OUTPUT_DIR SWEEP_SCRIPT [SWEEP_OPTIONS...]
    python -m sentsweep.sweep.compute.slurm_job clean TEMP_ROOT [--this-job]
    python -m sentsweep.sweep.compute.slurm_job redact TEXT

The options a job was submitted with (`submit_options`): SLURM keeps the submission's command line as the job's
`SubmitLine` (`scontrol show job`, SLURM 23.02 on; `sacct`, where accounting is kept). Where neither has it (SLURM
22.05 without accounting, as Debian 12 ships it) they are rebuilt from the job's record: its nodes, time limit,
partition, account, QoS, name, memory, CPUs per task, generic resources, features, reservation, node lists and
output file, the options that decide where and how long it runs. What such a record does not keep (a --signal
given on the command line, for one) comes from the script's own #SBATCH lines.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from sentsweep.sweep.compute.ray_leftovers import clean_job_temp_dirs
from sentsweep.tracking.store import redact

SCRIPT = "slurm/sweep.sbatch"
NULL = {"", "(null)", "N/A", "None"}
# `scontrol show job` fields that rebuild a submission's options: (field, option, when it is worth repeating)
RECORD_OPTIONS = (
    ("NumNodes", "--nodes", None), ("TimeLimit", "--time", lambda value: value != "UNLIMITED"),
    ("Partition", "--partition", None), ("Account", "--account", None), ("QOS", "--qos", None),
    ("JobName", "--job-name", None), ("MinMemoryNode", "--mem", lambda value: value not in ("0", "0M")),
    ("MinMemoryCPU", "--mem-per-cpu", lambda value: value not in ("0", "0M")),
    ("CPUs/Task", "--cpus-per-task", lambda value: value != "1"),
    ("TresPerNode", "--gres", None), ("Features", "--constraint", None), ("Reservation", "--reservation", None),
    ("ReqNodeList", "--nodelist", None), ("ExcNodeList", "--exclude", None),
)
_FIELD = re.compile(r"(?:^|\s)([A-Z][A-Za-z/:_]*)=")


def job_record(job: str) -> dict[str, str]:
    """The fields of `scontrol show job -o JOB` (a value may hold blanks: SubmitLine, Command)."""
    answer = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True, timeout=60)
    return parse_record(answer.stdout if answer.returncode == 0 else "")


def parse_record(text: str) -> dict[str, str]:
    """{field: value} of one line of `scontrol show job -o`."""
    text = text.strip()
    marks = list(_FIELD.finditer(text))
    return {mark.group(1): text[mark.end():marks[index + 1].start() if index + 1 < len(marks) else len(text)].strip()
            for index, mark in enumerate(marks)}


def submit_options(record: dict[str, str], submit_line: str | None = None) -> list[str]:
    """The sbatch options of the job `record` (`job_record`): those of its submission line where SLURM kept it
    (`submit_line`, else the record's SubmitLine), else rebuilt from the record (see the module's docstring)."""
    line = submit_line or record.get("SubmitLine")
    if line:
        words = shlex.split(line)
        command = record.get("Command", "")
        script = Path(command.split()[0] if command not in NULL else SCRIPT).name
        for index, word in enumerate(words[1:], start=1):
            if Path(word).name == script:
                return words[1:index]
    options = []
    for field, option, worth in RECORD_OPTIONS:
        value = record.get(field, "")
        if value in NULL or (worth is not None and not worth(value)):
            continue
        if field == "TresPerNode":
            value = value.removeprefix("gres:").replace(",gres:", ",")
        options.append(f"{option}={value}")
    output = record.get("StdOut", "")
    default_output = f"{record.get('WorkDir', '')}/sentsweep-{record.get('JobId', '')}.out"
    if output and output not in NULL and output != default_output:  # the script's default names the new job's id
        options.append(f"--output={output}")
    return options


def accounting_submit_line(job: str) -> str | None:
    """The job's SubmitLine as SLURM's accounting keeps it, where it does."""
    try:
        answer = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", "SubmitLine"], capture_output=True,
                                text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = answer.stdout.strip().splitlines()[0].strip() if answer.returncode == 0 and answer.stdout.strip() else ""
    return line or None


def resume_line(job: str, output_dir: str, sweep: list[str]) -> str:
    """The command that resumes the sweep of job `job`: sbatch with the job's options, its output folder, its
    tracking URI where it came from the environment, the sweep's own options and --resume; credentials hidden."""
    record = job_record(job)
    line = None if record.get("SubmitLine") else accounting_submit_line(job)
    environment = [f"SENTSWEEP_OUTPUT_DIR={shlex.quote(output_dir)}"]
    if os.environ.get("MLFLOW_TRACKING_URI"):
        environment.append(f"MLFLOW_TRACKING_URI={shlex.quote(os.environ['MLFLOW_TRACKING_URI'])}")
    resume = [] if "--resume" in sweep else ["--resume"]
    return redact(" ".join(environment + [shlex.join(["sbatch", *submit_options(record, line), SCRIPT, *sweep,
                                                      *resume])]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentsweep.sweep.compute.slurm_job",
                                     description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    resume = commands.add_parser("resume-line", help="the command that resumes this job's sweep")
    resume.add_argument("output_dir")
    resume.add_argument("sweep", nargs=argparse.REMAINDER)
    clean = commands.add_parser("clean", help="remove the Ray temp dirs (ray-JOBID) of jobs that are over")
    clean.add_argument("temp_root")
    clean.add_argument("--this-job", action="store_true", help="this job's own too (SLURM_JOB_ID)")
    hide = commands.add_parser("redact", help="TEXT with the credentials of its URIs hidden")
    hide.add_argument("text")
    args = parser.parse_args(argv)
    if args.command == "resume-line":
        print(resume_line(os.environ["SLURM_JOB_ID"], args.output_dir, args.sweep))
    elif args.command == "clean":
        for removed in clean_job_temp_dirs(Path(args.temp_root),
                                           os.environ.get("SLURM_JOB_ID") if args.this_job else None):
            print(f"removed {removed}")
    else:
        print(redact(args.text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
