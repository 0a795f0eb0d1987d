"""Where a sweep driver's CPU goes: `python sweeps/nm_weight.py --quick` (24 trials in 2 stages, 4 kept models, a
new SQLite store, the driver's own local Ray) in a fresh interpreter, its parts timed by `time.process_time` around
the functions that do them, and the driver's CPU against the machine's while the sweep runs.

A profiler is no measure here: `cProfile` adds its cost to every Python call, and the driver's MLflow writes and
MLflow's package scan are made of many small calls, so a profile puts several times their real CPU on them.

The parts, each the CPU of the driver's process inside one function (what it calls included):

- imports: PyTorch, sentence-transformers, Ray Tune, MLflow and matplotlib, imported before the sweep starts;
- the store's creation (`sentsweep.tracking.store.prepare_store`: MLflow's schema migrations);
- MLflow writes (`QueuedMlflowWriter._apply`, every queued operation);
- stage plots (`log_stage_plots`: the figures and their files);
- kept models (logging each kept model with MLflow's sentence-transformers flavour), and within it MLflow's map of
  installed files to packages, made once per process to check the model's requirements;
- the rest: Ray Tune's loop, the driver's tables, progress and checks.

The machine's CPU is /proc/stat's over the run (the driver, Ray's processes, the trials, the fork server), so the
machine should be otherwise idle. A first run starts the fork server (it stays 2 idle minutes, as between a
researcher's sweeps in a row) and is not counted; the second is. One round: the parts are the driver's own CPU,
which the neighbours change little.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Result

ROOT = Path(__file__).resolve().parents[1]
# The driver, its parts timed: argv[1] is the JSON file it writes, argv[2] the sweep's output folder.
DRIVER = """
import json, sys, time
from collections import defaultdict

import matplotlib.pyplot, mlflow, ray.tune, sentence_transformers, torch  # noqa: F401
imports = time.process_time()
parts = defaultdict(float)

def timed(owner, name, part):
    function = getattr(owner, name)
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            parts[part] += time.process_time() - started
    setattr(owner, name, wrapper)

import mlflow.utils.requirements_utils as requirements
from sentsweep.experiments.reiml_2023.nm_weight import DEFINITION
from sentsweep.sweep import run_sweep
from sentsweep.sweep.execution import stage_run
from sentsweep.sweep.launch import launcher
from sentsweep.tracking import models
from sentsweep.tracking.writer import QueuedMlflowWriter

timed(launcher, "prepare_store", "store")
timed(QueuedMlflowWriter, "_apply", "mlflow_writes")
timed(stage_run, "log_stage_plots", "plots")
timed(models, "_log_model_folder", "kept_models")
timed(requirements, "_init_modules_to_packages_map", "package_map")
parts_file, output = sys.argv[1:3]
sys.argv = ["sweeps/nm_weight.py"]
code = run_sweep(DEFINITION, ["--quick", "--output-dir", output, "--tracking-uri", f"sqlite:///{output}/mlflow.db"])
with open(parts_file, "w") as handle:
    json.dump(dict(parts, imports=imports, total=time.process_time(), code=code), handle)
"""
PARTS = [("imports", "imports (PyTorch, sentence-transformers, Ray Tune, MLflow, matplotlib)"),
         ("store", "the new SQLite store (MLflow's schema migrations)"),
         ("mlflow_writes", "MLflow writes (every queued operation)"),
         ("plots", "stage plots (7 figures)"),
         ("kept_models", "kept models (4, MLflow's sentence-transformers flavour)"),
         ("package_map", "  of which MLflow's map of installed files to packages (once per process)")]


def machine_cpu() -> float:
    user, nice, system = (int(field) for field in Path("/proc/stat").read_text().split()[1:4])
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def driver_run() -> tuple[dict, float]:
    """The driver's parts (CPU seconds) and the machine's CPU seconds over the run."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out"
        output.mkdir()
        before = machine_cpu()
        parts_file = Path(folder) / "parts.json"
        subprocess.run([sys.executable, "-c", DRIVER, str(parts_file), str(output)], cwd=ROOT, check=True,
                       capture_output=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
        machine = machine_cpu() - before
        parts = json.loads(parts_file.read_text())
    if parts["code"] != 0:
        raise RuntimeError(f"the quick NM-weight sweep ended with {parts['code']}")
    return parts, machine


def run() -> list[Result]:
    driver_run()  # starts the fork server and fills the file cache
    parts, machine = driver_run()
    accounted = sum(parts[name] for name, _ in PARTS if name != "package_map")
    print("| part of the driver | CPU s |\n|---|---|")
    for name, words in PARTS:
        print(f"| {words} | {parts[name]:.1f} |")
    print(f"| the rest: Ray Tune's loop, tables, progress, checks | {parts['total'] - accounted:.1f} |")
    print(f"| **the driver's process** | **{parts['total']:.1f}** |")
    print(f"| the machine, over the run (driver, Ray, trials, fork server) | {machine:.1f} |", flush=True)
    return [Result("the quick NM-weight sweep (24 trials), its driver in a fresh interpreter", 3600 / parts["total"],
                   3600 / machine, "sweeps/CPU-h", "the machine's CPU over the sweep (all its processes)")]


if __name__ == "__main__":
    for result in run():
        print(result.row())
