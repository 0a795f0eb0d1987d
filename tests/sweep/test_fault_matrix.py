"""The fault matrix: every shape of sweep the project has, its driver stopped at each point where its state
changes, by Ctrl-C (SIGINT to its process group) or `kill -9` (SIGKILL), then continued with the command it
printed (or with --resume after a SIGKILL), must end as an uninterrupted run of the same sweep does. So must a
sweep whose MLflow server (a real `mlflow server` on 127.0.0.1) goes down at each of those points:

- BLINK: down until the driver first waits for it (shorter than --mlflow-wait): the sweep finishes in one run;
- OUTAGE: down until the driver has given up (longer than --mlflow-wait): the driver stops (exit 3) with one line
  naming its pending file, what it holds and the command that finishes the sweep, which, once the server is back,
  replays the file first and finishes it;
- CRASH: down, and the driver killed (`kill -9`) when it first waits for it: --resume, once the server is back,
  replays the pending file the dead driver left first and finishes the sweep.

And so must a sweep whose storage fails under its trials: a full disk (ENOSPC) as a trial hands a checkpoint over,
or the output folder removed as a trial finishes (GONE): the driver says the fault in one line once noticed, retries
no trial, stops (exit 3) naming the points left unfinished and the command that finishes the sweep, which does.

The same outages come from a SQLite store that another process holds locked (LOCK-BLINK: released when the driver
first waits for it; LOCK-OUTAGE: held until the driver has given up), the store's lock taken and released where the
server would stop and start (tests/helpers/sqlite_locker.py).

And so must a sweep continued twice at once (TWICE): stopped by Ctrl-C, its printed command started again while
it runs (a second --resume typed, a requeued SLURM job): the second driver stops at once with one line naming the
first (exit 2, sentsweep.sweep.execution.driver_lock), the first finishes the sweep, and --resume after that has nothing
to resume (exit 0).

In every case:

- the continuation exits 0 and the sweep's MLflow run is FINISHED;
- each (stage, configuration, seed) has exactly one FINISHED run, and the same cells as the uninterrupted run;
  no run is left RUNNING or FAILED: a run left out ended KILLED, tagged `interrupted`, and its cell finished in
  another run (a trial Ray Tune had not saved, started anew: tagged `lost_trial` too; an interrupted --extend run
  again: its trials' runs stay KILLED beside the new ones);
- a chained stage's runs start from the same seed's model of the same earlier-stage configuration;
- each stage's table (values, n, significance marks, selected steps) equals the uninterrupted run's.

Kill points and outages are deterministic: the driver stops itself, or stops and starts its MLflow server (and waits
until it is down, or up), where `SENTSWEEP_FAULT` says (`sentsweep.faults`), whatever the machine's speed or load.
Each driver is its own process group (forked from the fork server as `python sweeps/<name>.py` runs:
tests/helpers/forked_python.py). The drivers of the shapes in OWN_RAY start their own embedded Ray for a signal
or a full disk (OWN_RAY_FAULTS), as `python sweeps/<name>.py` in a terminal does: Ctrl-C reaches Ray's processes too,
`kill -9` leaves them behind, and a full disk is raised in a trial's process. The other drivers join the session's
shared Ray, as a driver joins a cluster (`ray submit`, RAY_ADDRESS): the signal reaches the driver alone, Ray ends a
dead driver's trials, and a driver whose MLflow server goes away reaches it over HTTP within a second of its start, as
one on a cluster reaches its head's.

`make test` runs a representative subset (`SUBSET`: both signals, on a Ray of the driver's own and on the shared
one; a Ctrl-C in nm_weight's second stage, whose carried values the resume needs, continued by two drivers at once;
the chained and race-over-steps shapes; an MLflow outage with a crash, and a removed output folder);
`make fault-matrix` (SENTSWEEP_FAULT_MATRIX=all) runs every case and writes the outcome table to
sweep_outputs/fault_matrix.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import RACE_NOT_COUNTED_TAG, RACE_STOPPED_TAG, fetch_trial_runs, latest_sweep_run_id
from sentsweep.faults import FAULT_ENV, FOLDER_ENV, OUTAGES, STORAGE_FAULTS
from sentsweep.sweep.execution.driver_lock import read_holder
from tests.helpers.cluster_helpers import PROJECT, MlflowServer, run_driver, sqlite_store, start_driver, start_sweep
from tests.helpers.forked_python import ForkedProcess
from tests.helpers.sqlite_locker import SqliteLocker

pytestmark = pytest.mark.slow

FEW_STEPS = ["--max-steps", "20", "--eval-steps", "10"]


@dataclass(frozen=True)
class Shape:
    script: str
    arguments: tuple[str, ...]
    points: tuple[str, ...]  # point:stage pairs where its driver is stopped (sentsweep.faults.POINTS)
    before: tuple[str, ...] | None = None  # a sweep run first, uninterrupted (--extend adds to it)
    shows: str | None = None  # what the uninterrupted run must print (the shape exercises it)


TSDAE_GRID = ("--ratios", "0.3", "0.6", "--poolings", "cls", "--seeds", "2")
SHAPES = {
    "grid": Shape("tsdae_deletion.py", TSDAE_GRID, ("trial:0", "model:0", "table:0", "stage:0")),
    "multistage": Shape("nm_weight.py", ("--poolings", "cls", "--methods", "tsdae+nm", "--weights", "0.01", "1.0"),
                        ("trial:0", "stage:0", "trial:1", "model:1", "table:1")),
    # one seed: four stages of 3, 2, 2 and 2 configurations (the other shapes resume over seeds)
    "greedy": Shape("tsdae_noise.py", ("--seeds", "1"), ("trial:0", "stage:0", "trial:2", "model:3", "table:3")),
    # stage 2 starts from each seed's model of each stage-1 configuration; stage 3 trains from the released model
    "chained": Shape("labelled_after_pretraining.py", ("--methods", "tsdae", "--labelled-sizes", "50"),
                     ("trial:0", "model:0", "stage:0", "trial:1", "table:2")),
    "race": Shape("tsdae_deletion.py", ("--ratios", "0.3", "0.6", "0.9", "--poolings", "cls", "--race", "--seeds",
                                        "3", "--race-initial-seeds", "2"), ("trial:0", "model:0", "table:0")),
    # the race over steps: on the tiny model CLS pooling is clearly worse at the rung (step 10 of 20), so its two
    # configurations stop there, paused or running; `trial:0` is the first of those stops, the others paused
    "race-steps": Shape("tsdae_deletion.py", ("--ratios", "0.3", "0.6", "--poolings", "cls", "mean", "--race",
                                              "--race-schedule", "steps", "--seeds", "3"),
                        ("trial:0", "model:0", "table:0"), shows="(stopped at step 10 by the race)"),
    "optuna": Shape("tsdae_deletion.py", ("--search", "optuna", "--num-configs", "2", "--poolings", "cls", "--seeds",
                                          "2"), ("trial:0", "model:0", "table:0")),
    # a one-seed sweep, then --extend to two seeds: stopped and run again, it must give the two-seed grid's table
    "extend": Shape("tsdae_deletion.py", ("--extend",) + TSDAE_GRID, ("trial:0", "model:0", "table:0"),
                    before=TSDAE_GRID[:-1] + ("1",)),
}
SIGNALS = ("INT", "KILL")
TWICE = "TWICE"  # stopped by Ctrl-C, then continued by two drivers at once
# shapes whose drivers start a Ray of their own where the fault needs one (both signals among the subset's cases:
# grid's KILL, multistage's INT continued twice); a Ray start and stop costs seconds
OWN_RAY = {"grid", "multistage"}
# what needs that Ray of the driver's own: a signal, which reaches Ray's processes (Ctrl-C) or leaves them behind
# (kill -9), and a full disk, raised in the trial's process, which FAULT_ENV reaches only where the driver starts the
# Ray; MLflow's outages and a removed output folder are met by the driver itself, as on a cluster
OWN_RAY_FAULTS = {*SIGNALS, TWICE, "ENOSPC"}
LOCKS = {"LOCK-BLINK": "BLINK", "LOCK-OUTAGE": "OUTAGE"}  # the SQLite store held locked, as an outage of its server
# every point by every signal and MLflow outage shorter and longer than --mlflow-wait; a crash during an outage at
# each shape's first point
ALL_CASES = [(shape, point, fault) for shape, spec in SHAPES.items() for point in spec.points
             for fault in SIGNALS + ("BLINK", "OUTAGE", "LOCK-OUTAGE")] + [
    (shape, spec.points[0], fault) for shape, spec in SHAPES.items() for fault in ("CRASH", TWICE, "LOCK-BLINK")] + [
    # the storage failing under the trials: a full disk as a trial checkpoints (raised in the trial's process, which
    # the variable reaches where the driver starts its own Ray), the output folder removed as a trial finishes
    (shape, point, fault) for shape in sorted(OWN_RAY) for point, fault in (("checkpoint:0", "ENOSPC"),
                                                                           ("trial:0", "GONE"))]
# make test: both signals; a Ctrl-C in nm_weight's second stage continued by two drivers at once (the resume needs the
# first stage's carried values, as the greedy search's stages do); a chained stage's models and the race over steps'
# state kept across a resume; a driver killed while it waits for its MLflow server, and the output folder removed
# mid-stage. (An MLflow server lost mid-stage and back while the driver waits: tests/sweep/test_distributed.py; an
# extension stopped and continued by its own command line: tests/sweep/test_resources.py; the other shapes' cases:
# `make fault-matrix`.)
SUBSET = [("grid", "model:0", "KILL"), ("multistage", "trial:1", TWICE), ("chained", "model:0", "INT"),
          ("race-steps", "trial:0", "INT"), ("grid", "trial:0", "CRASH"), ("grid", "trial:0", "GONE")]
CASES = ALL_CASES if os.environ.get("SENTSWEEP_FAULT_MATRIX") == "all" else SUBSET
REPORT = PROJECT / "sweep_outputs" / "fault_matrix.md"
# A driver is taken for hung, and killed, once it printed nothing for this long; never for being slow: while its
# trials run it prints its progress line every --progress-interval (30 s), and between them it works in steps of
# seconds to minutes. (A limit on a driver's whole run fails slow but correct drivers under load.)
DRIVER_SILENCE_S = 900
OUTAGE_WAIT_S = 5  # --mlflow-wait of the outage cases: an OUTAGE outlasts it, a BLINK ends at the first wait
# the one line a driver stops with when MLflow stayed away past --mlflow-wait (sentsweep.sweep.execution.runner)
OUTAGE_STOP = re.compile(
    r"^error: MLflow at (?P<uri>\S+) stayed unreachable for (?P<waited>\S+) s while (?P<what>.+): the sweep's MLflow "
    r"run (?P<run>\w+) stays RUNNING, and (?:nothing is queued|(?P<queued>\d+) queued writes \((?P<kinds>[^)]*)\) "
    r"of \d+ trial runs(?:, \d+ configuration runs)?(?: and the sweep's run)? in (?P<file>\S+)); once MLflow is "
    r"back, finish the sweep with: (?P<command>.+)$", re.MULTILINE)
# the lines a driver stops with when its storage failed (sentsweep.sweep.execution.storage_faults): said once noticed,
# then the stop with the points left unfinished and the command that finishes the sweep
STORAGE_NOTICED = re.compile(r"^error: (?P<fault>no space left on the disk of (?P<full>\S+) \(.+ free.*\)|the folder "
                             r"(?P<gone>\S+) was removed while the sweep ran); stopping the sweep$", re.MULTILINE)
STORAGE_STOP = re.compile(r"^error: (?P<fault>.+): the sweep stopped; their MLflow runs and the sweep's ended KILLED\n"
                          r"unfinished \(configuration, seed\) points of the stage:\n(?P<points>(?:  .+ seed \d+\n)+)"
                          r"once there is room, or the folder is back, finish the sweep with:\n  (?P<command>.+)$",
                          re.MULTILINE)
REPLAYED = re.compile(r"^writing the (\d+) queued writes \(.*\) of .* in (\S+), left by the sweep's last driver$",
                      re.MULTILINE)


def experiment_of(script: str) -> str:
    return script.removesuffix(".py")


def run_to_end(command: list[str] | str, workdir: Path, arguments: tuple[str, ...] = (), env: dict | None = None,
               ) -> tuple[int, str]:
    """Run a driver to its end: a sweep script (start_sweep adds --quick and the output folder) or a printed
    command line; returns its exit code (negative: the signal that ended it) and what it printed."""
    log_file = workdir / "driver.log"
    start = log_file.stat().st_size if log_file.exists() else 0
    if isinstance(command, str):
        process = start_sweep(command, workdir, *arguments, env=env)
    else:
        process = start_driver(command, workdir, env)
    code = wait_while_printing(process, log_file)
    _reap(process.pid)
    return code, log_file.read_bytes()[start:].decode(errors="replace")


def wait_while_printing(process: ForkedProcess | subprocess.Popen, log_file: Path) -> int:
    """The driver's exit code, once it ends; a driver that printed nothing to `log_file` for DRIVER_SILENCE_S is
    killed (its process group) and the test fails, however long it has run."""
    size, printed_at = -1, time.monotonic()
    while True:
        try:
            return process.wait(timeout=1)  # at once when it ends, a look at its log every second meanwhile
        except subprocess.TimeoutExpired:
            pass
        if log_file.stat().st_size != size:
            size, printed_at = log_file.stat().st_size, time.monotonic()
        elif time.monotonic() - printed_at > DRIVER_SILENCE_S:
            _reap(process.pid)
            pytest.fail(f"the driver printed nothing for {DRIVER_SILENCE_S} s: hung\n"
                        + log_file.read_text(errors="replace")[-3000:])


def _reap(group: int) -> None:
    """Kill what a driver's process group left behind (Ray's processes after the driver's SIGKILL)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stage_tables(log: str) -> dict[str, list[str]]:
    """{stage title: its table's rows} as the driver last printed each (a resumed driver prints them all again)."""
    tables, title = {}, None
    for line in log.splitlines():
        heading = re.match(r"^\n?(.+): mean ± std over seeds \(MLflow experiment", line)
        if heading:
            title = heading.group(1)
            tables[title] = []
        elif title is not None and line.startswith("| "):
            tables[title].append(line)
        elif re.match(r"^- .+: n=\d+, ", line):  # a race's status of each configuration
            tables.setdefault("race status", []).append(line)
        elif title is not None and tables[title] and not line.startswith("|"):
            title = None
    return tables


def sweep_runs(uri: str, experiment: str, workdir: Path):
    """(the sweep run's status, its trial runs with `cell`: stage, params and seed with the sweep's own folder
    taken out, and `parent_cell`: the cell of the run a chained trial's model comes from)."""
    client = MlflowClient(uri)
    parent = latest_sweep_run_id(uri, experiment)
    runs = fetch_trial_runs(uri, experiment, parent)
    folder = str(workdir)
    params = {run_id: {key: value.replace(folder, "<dir>") for key, value in client.get_run(run_id).data.params.items()}
              for run_id in runs["run_id"]}
    tags = {run_id: client.get_run(run_id).data.tags for run_id in runs["run_id"]}

    def cell(run_id: str) -> tuple:
        chained = "parent_model_run_id" in tags[run_id]
        return tuple(sorted((key, value) for key, value in params[run_id].items()
                            if not (chained and key == "model")))

    runs["cell"] = [cell(run_id) for run_id in runs["run_id"]]
    runs["parent_cell"] = [cell(tags[run_id]["parent_model_run_id"]) if "parent_model_run_id" in tags[run_id]
                           else None for run_id in runs["run_id"]]
    runs["interrupted"] = ["interrupted" in tags[run_id] for run_id in runs["run_id"]]
    # an asynchronous race's seed run ahead for a configuration it then dropped: run or not as the timing falls,
    # left out of its table (sentsweep.sweep.execution.stage_race.RaceOutcome.counted_runs) and of the cells compared
    runs["counted"] = [RACE_NOT_COUNTED_TAG not in tags[run_id] for run_id in runs["run_id"]]
    # a trial the race stopped (KILLED, stopped early): one a rung dropped is counted, at the rung
    runs["stopped_for_race"] = [RACE_STOPPED_TAG in tags[run_id] or (RACE_NOT_COUNTED_TAG in tags[run_id]
                                                                     and "stopped_early" in tags[run_id])
                                for run_id in runs["run_id"]]
    return client.get_run(parent).info.status, runs


@dataclass
class Outcome:
    code: int
    log: str
    status: str
    runs: object
    uri: str  # the reference's MLflow store, kept for the run of the suite (other tests read its sweep)


def uninterrupted(shape: Shape, computed_once, ray_address: str) -> Outcome:
    """The shape's sweep run without a fault, once per run of the suite and arguments, whichever case (or worker of
    a parallel run) asks first (the extension's reference is the grid it extends to, run whole). Nothing stops it, so
    its driver runs in this process (no interpreter of its own to start) on the session's shared Ray (`ray_address`),
    whichever Ray its cases' drivers run on; what it prints is its log. Tests of the same sweep read it too (the
    greedy search's carried values, the race's accounts): they must not write to its store."""
    import ray

    from tests.sweep.test_sweep_end_to_end import load_sweep

    arguments = tuple(argument for argument in shape.arguments if argument != "--extend")
    key = "fault-matrix-reference-" + hashlib.sha256(repr((shape.script, arguments)).encode()).hexdigest()[:16]

    def run(workdir: Path) -> Outcome:
        uri = sqlite_store(workdir)
        script = PROJECT / "sweeps" / shape.script
        module = load_sweep(script)
        output = io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(output), \
                contextlib.redirect_stderr(output):
            patch.setenv("RAY_ADDRESS", ray_address)
            patch.setattr(sys, "argv", [str(script)])  # the runs' source, as a driver of its own names it
            patch.chdir(workdir)  # where a driver of its own runs (start_sweep)
            try:
                code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(workdir / "out"),
                                                            "--tracking-uri", uri, *arguments, *FEW_STEPS])
            finally:
                ray.shutdown()
        log = output.getvalue()
        assert code == 0, log[-3000:]
        assert shape.shows is None or shape.shows in log, log[-3000:]
        return Outcome(code, log, *sweep_runs(uri, experiment_of(shape.script), workdir), uri)

    return computed_once(key, run)


@pytest.fixture(scope="session")
def report(tmp_path_factory, worker_id):
    """The outcome table of the cases run, written to sweep_outputs/fault_matrix.md at the session's end: the rows of
    every worker of a parallel run (each keeps its own in the run's shared folder, the last to end writes them all)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent
    rows: list[str] = []
    yield rows
    (shared / f"fault-matrix-rows-{worker_id}.md").write_text("".join(row + "\n" for row in rows))
    with FileLock(str(shared / "fault-matrix-rows.lock")):
        every = sorted(line for part in shared.glob("fault-matrix-rows-*.md") for line in part.read_text().splitlines())
        REPORT.parent.mkdir(exist_ok=True)
        REPORT.write_text("| shape | kill point | signal | stopped | continued | outcome |\n|---|---|---|---|---|---|\n"
                          + "\n".join(every) + "\n")


@pytest.mark.parametrize("shape_name, point, signal_name", CASES, ids=["-".join(case) for case in CASES])
def test_a_sweep_stopped_anywhere_is_resumed_to_the_uninterrupted_table(tmp_path, computed_once, shared_ray, report,
                                                                       shape_name, point, signal_name):
    shape = SHAPES[shape_name]
    experiment = experiment_of(shape.script)
    reference = uninterrupted(shape, computed_once, shared_ray)
    server = (MlflowServer(tmp_path / "mlflow") if signal_name in OUTAGES else
              SqliteLocker(tmp_path / "mlflow.db") if signal_name in LOCKS else None)
    ray_env = {} if shape_name in OWN_RAY and signal_name in OWN_RAY_FAULTS else {"RAY_ADDRESS": shared_ray}
    try:
        outcome = stop_and_continue(tmp_path, shape, point, signal_name, server, ray_env)
        status, runs = sweep_runs(server.uri if server else outcome["uri"], experiment, tmp_path)
    finally:
        if server is not None:
            server.kill()
    code, log = outcome["code"], outcome["log"]
    assert code == 0, log[-5000:]
    assert status == "FINISHED"
    assert not runs["status"].isin(["RUNNING", "FAILED"]).any(), runs[["ray_trial_id", "seed", "status"]]
    # a run left out ended KILLED, tagged interrupted (and lost_trial where Ray Tune had not saved its trial), and
    # its (stage, configuration, seed) finished in another run: the resumed trial, or an --extend run again; a run
    # the race stopped is its own (below)
    left_out = runs[(runs["status"] != "FINISHED") & ~runs["stopped_for_race"]]
    finished = runs[(runs["status"] == "FINISHED") | runs["stopped_for_race"]]
    assert (left_out["status"] == "KILLED").all() and left_out["interrupted"].all(), left_out[["seed", "status"]]
    assert set(left_out["cell"]) <= set(finished["cell"])
    assert not finished["cell"].duplicated().any(), "a (stage, configuration, seed) finished twice"
    finished = finished[finished["counted"]]
    reference_finished = reference.runs[((reference.runs["status"] == "FINISHED") | reference.runs["stopped_for_race"])
                                        & reference.runs["counted"]]
    assert set(finished["cell"]) == set(reference_finished["cell"])
    assert (set(zip(finished["cell"], finished["parent_cell"]))
            == set(zip(reference_finished["cell"], reference_finished["parent_cell"])))
    tables = stage_tables(log)
    assert tables and tables == stage_tables(reference.log), log[-5000:]
    assert not list((tmp_path / "out").glob("mlflow-pending-*.jsonl")), "queued writes left unwritten"
    report.append(f"| {shape_name} | {point} | {signal_name} | {outcome['stopped']} | {outcome['continued']} | "
                  f"{len(finished)} cells finished once, {len(left_out)} run(s) left KILLED, {len(tables)} table(s) "
                  f"equal ({time.monotonic() - outcome['started']:.0f} s) |")


def stop_and_continue(workdir: Path, shape: Shape, point: str, fault: str,
                      server: MlflowServer | SqliteLocker | None, ray_env: dict) -> dict:
    """Run the shape's sweep with `fault` at `point` (an MLflow outage: on `server`, which the driver stops and
    starts, or a SQLite store it locks and releases), then, unless it finished, continue it as a user would: the
    command it printed, or --resume after a SIGKILL, once the server is back. Every driver runs with `ray_env`
    (RAY_ADDRESS: the Ray it joins; none: its own). Returns the continuation's exit code and output (that of the
    faulted run where it finished), how the run stopped and was continued, the store's URI and when it started."""
    uri = sqlite_store(workdir) if server is None or fault in LOCKS else server.uri
    fault = LOCKS.get(fault, fault)
    arguments = ("--tracking-uri", uri, *shape.arguments, *FEW_STEPS)
    if shape.before is not None:
        code, log = run_to_end(shape.script, workdir, ("--tracking-uri", uri, *shape.before, *FEW_STEPS), env=ray_env)
        assert code == 0, log[-3000:]
    signal_name = "INT" if fault == TWICE else fault
    env = ray_env | {FAULT_ENV: f"{point}:{signal_name}", FOLDER_ENV: str(workdir / "out")}
    if server is not None:
        arguments += ("--mlflow-wait", str(OUTAGE_WAIT_S))
        env |= server.fault_commands()

    started = time.monotonic()
    code, log = run_to_end(shape.script, workdir, arguments, env=env)
    name = f"SIG{signal_name}" if signal_name in SIGNALS else fault
    # (a trial's fault is printed in the trial's process, whose output the driver does not show)
    assert point.startswith("checkpoint") or f"[{FAULT_ENV}] {name} at" in log, (
        f"the fault point {point} was never reached:\n{log[-3000:]}")
    outcome, queued = {"uri": uri, "started": started, "stopped": f"exit {code}"}, 0
    resume = [sys.executable, str(PROJECT / "sweeps" / shape.script), "--quick", "--output-dir",
              str(workdir / "out"), *arguments, "--resume"]
    if "--extend" in arguments:  # an extension is continued by running it again (it refuses --resume)
        resume.remove("--resume")
    if fault == "BLINK":  # back while the driver waited: it went on and finished
        assert f"[{FAULT_ENV}] BLINK: the driver waits for MLflow" in log, log[-3000:]
        return outcome | {"code": code, "log": log, "continued": "-"}
    if signal_name == "INT":
        assert code == 130, log[-3000:]
        continuation = shlex.split(log.split("resume with:\n", 1)[1].strip().splitlines()[0])
    elif fault == "OUTAGE":  # stopped with one line: the pending file, what it holds, the command that finishes it
        assert code == 3, log[-3000:]
        stop = OUTAGE_STOP.search(log)
        assert stop and stop.group("waited") == str(OUTAGE_WAIT_S) and stop.group("uri") == uri, log[-3000:]
        queued = int(stop.group("queued") or 0)
        pending = list((workdir / "out").glob("mlflow-pending-*.jsonl"))
        assert [str(path) for path in pending] == ([stop.group("file")] if queued else []), pending
        if queued:  # the header, then one write a line
            assert len(pending[0].read_text().splitlines()) - 1 == queued
        server.start()
        assert MlflowClient(uri).get_run(latest_sweep_run_id(uri, experiment_of(shape.script))).info.status == (
            "RUNNING"), "the message says the sweep's run stays RUNNING"
        continuation = shlex.split(stop.group("command"))
        outcome["stopped"] += f", {queued} writes queued"
    elif fault in STORAGE_FAULTS:  # stopped at once: the folder named, the unfinished points, the command
        assert code == 3, log[-3000:]
        noticed, stop = STORAGE_NOTICED.search(log), STORAGE_STOP.search(log)
        assert noticed and stop and stop.group("fault") == noticed.group("fault"), log[-3000:]
        assert (noticed.group("gone") == str(workdir / "out") if fault == "GONE"
                else noticed.group("full").startswith(str(workdir / "out" / "ray"))), noticed.group(0)
        assert "is retried" not in log, log[-3000:]  # no retry of a trial that a retry cannot mend
        continuation = shlex.split(stop.group("command"))
        outcome["stopped"] += f", {len(stop.group('points').splitlines())} points unfinished"
    else:  # KILL, CRASH
        assert code == -signal.SIGKILL, log[-3000:]
        continuation = resume
        if fault == "CRASH":
            pending = list((workdir / "out").glob("mlflow-pending-*.jsonl"))
            assert len(pending) == 1, pending
            queued = len(pending[0].read_text().splitlines()) - 1
            outcome["stopped"] += f", {queued} writes queued"
            server.start()

    if fault == TWICE:
        return outcome | continued_twice(workdir, continuation, ray_env, experiment_of(shape.script))
    code, log = run_to_end(continuation, workdir, env=ray_env)
    continued = f"exit {code}"
    if fault in OUTAGES and queued:  # the pending file's writes, first
        replayed = REPLAYED.search(log)
        assert replayed and int(replayed.group(1)) == queued, log[-3000:]
        continued += f", {queued} writes replayed first"
    return outcome | {"code": code, "log": log, "continued": continued}


def continued_twice(workdir: Path, continuation: list[str], ray_env: dict, sweep: str) -> dict:
    """`continuation` started, and again once the first holds the sweep's lock: the second must stop at once, in one
    line naming the first, exit 2, writing nothing; then, once the first finished, a --resume (of a sweep that is no
    --extend run) has nothing to resume. The first's exit code and output."""
    log_file = workdir / "driver.log"
    start = log_file.stat().st_size
    first = start_driver(continuation, workdir, ray_env)
    lock = workdir / "out" / "ray" / f"sweep-driver.{sweep}.{sweep}.lock"
    while (holder := read_holder(lock)) is None:
        assert first.poll() is None, log_file.read_bytes()[start:].decode(errors="replace")[-3000:]
        time.sleep(0.2)
    second = run_driver(continuation, workdir, ray_env)
    assert second.returncode == 2 and second.stdout == "", second.stdout + second.stderr
    host, path = re.escape(holder[1]), re.escape(str(lock))
    assert re.fullmatch(rf"error: sweep {sweep} is run by another driver: pid {holder[0]} on host {host} since "
                        rf"[^;]+; wait for it to end; if that process is gone from {host}, remove {path}\n",
                        second.stderr), second.stderr
    code = wait_while_printing(first, log_file)
    _reap(first.pid)
    continued = f"exit {code}, a second driver refused (exit 2)"
    if "--resume" in continuation and code == 0:
        again = run_driver(continuation, workdir, ray_env)
        assert again.returncode == 0 and again.stdout.startswith("nothing to resume: "), again.stdout + again.stderr
        continued += ", --resume then: nothing to resume"
    return {"code": code, "log": log_file.read_bytes()[start:].decode(errors="replace"), "continued": continued}


def test_an_error_after_a_stage_ends_the_sweep_failed_and_resume_finishes_it(tmp_path, monkeypatch, shared_ray):
    """Not a signal but a bug (or a lost disk) at a stage's end: the sweep's run ends FAILED with the reason, never
    RUNNING, no trial run stays RUNNING, and --resume, once the cause is gone, finishes the sweep."""
    import contextlib
    import io

    import ray

    import sentsweep.sweep.execution.models_kept as models_kept
    from sentsweep.experiments.reiml_2023.nm_weight import DEFINITION
    from sentsweep.sweep import run_sweep

    def broken(results):
        raise OSError("the disk of the checkpoints went away")

    # the driver script MLflow names as the runs' source, as the other in-process sweeps do: MLflow resolves a
    # process's git tags once, from the first run it creates, and later tests read them
    monkeypatch.setattr(sys, "argv", [__file__])
    uri = sqlite_store(tmp_path)
    arguments = ["--quick", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"), "--no-table-rows",
                 *SHAPES["multistage"].arguments, *FEW_STEPS]
    working = models_kept.delete_superseded_checkpoints
    monkeypatch.setattr(models_kept, "delete_superseded_checkpoints", broken)
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output), \
                pytest.raises(OSError, match="the disk of the checkpoints went away"):
            run_sweep(DEFINITION, arguments)
    finally:
        ray.shutdown()
    assert "its MLflow run ended FAILED" in output.getvalue() and "--resume" in output.getvalue()
    client = MlflowClient(uri)
    sweep = client.get_run(latest_sweep_run_id(uri, "nm_weight"))
    assert sweep.info.status == "FAILED"
    assert sweep.data.tags["failure_reason"] == "OSError: the disk of the checkpoints went away"
    assert "RUNNING" not in set(fetch_trial_runs(uri, "nm_weight", None)["status"])

    monkeypatch.setattr(models_kept, "delete_superseded_checkpoints", working)
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            assert run_sweep(DEFINITION, [*arguments, "--resume"]) == 0, output.getvalue()[-3000:]
    finally:
        ray.shutdown()
    assert client.get_run(sweep.info.run_id).info.status == "FINISHED"  # the same sweep run, reopened
    assert set(fetch_trial_runs(uri, "nm_weight", None)["status"]) == {"FINISHED"}
