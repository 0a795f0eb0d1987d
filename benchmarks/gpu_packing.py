"""Fractional GPUs: TSDAE trials per hour on one GPU with 1.0, 0.5 and 0.25 GPU per trial, how busy the GPU is
meanwhile, and the GPU memory probe's prediction against the memory the packed trials really took.

The same TRIALS trials (all-MiniLM-L6-v2, TSDAE, bf16 autocast, batch size 32, on the demo corpus) run as a
seeds sweep through the launcher, once per fraction, with the machine's CPU cores shared in the same
proportion. The reference is one trial per GPU. Each sweep's time includes its own start (baseline, Ray Tune)
and the launcher's GPU memory probe (`sentsweep.sweep.compute.gpu_packing`), as a user's sweep pays them.

First the probe runs on its own (`measure_on_cluster`, as the launcher runs it) and prints its prediction: the
trial's peak allocated memory, the footprint the packing counts per trial, how many fit and what
`--gpus-per-trial auto` would choose. A fraction whose trials the probe says do not fit is not run (the launcher
would refuse it too). During each sweep nvidia-smi is sampled every second: GPU utilisation, and the memory each
process on the GPU uses (what the footprint predicts: allocator cache and CUDA context included), the probe's own
process left out, so that the measured peaks are the packed trials'. After each sweep its protocol card (`--dry-run`
with the same options) estimates its GPU-hours from the probe the launch kept, as a user sees it before running the
sweep again, and the line puts that against the GPU-hours its trials recorded (`system/gpu_seconds`; the estimate
leaves out evaluation, checkpoints and start-up). Needs a CUDA machine; elsewhere it prints that it skipped (exit
code 0). scripts/gpu_checks.sh runs it on a machine without a network.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Result, benchmark_model_path
from benchmarks.sweep_overhead import trial_config

TRIALS, STEPS, FRACTIONS = 4, 300, (1.0, 0.5, 0.25)
MiB = 2**20


def nvidia_smi(query: str) -> list[list[str]]:
    """Rows of `nvidia-smi --query-...=...` as CSV without header or units."""
    output = subprocess.run(["nvidia-smi", query, "--format=csv,noheader,nounits"], capture_output=True, text=True,
                            check=True).stdout
    return [[field.strip() for field in line.split(",")] for line in output.splitlines() if line.strip()]


def is_trial(pid: str) -> bool:
    """Whether a process on the GPU is a trial's: not this driver (which computed the sweep's baseline on the GPU)
    and not the launcher's memory probe (Ray titles a task's worker `ray::probe_trial`); a process this machine
    cannot see (another PID namespace) counts as a trial."""
    if pid == str(os.getpid()):
        return False
    try:
        return b"probe_trial" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


@dataclass
class GpuUsage:
    utilisation: float  # mean GPU utilisation, %
    trial_peak_bytes: int  # the most one trial process used at once
    all_trials_peak_bytes: int  # the most all trial processes used together


class GpuSampler:
    """nvidia-smi every `interval_s` between start() and stop(): utilisation, and each trial process's memory."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self.process_peaks: dict[str, int] = {}
        self.together_peak = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stopped.wait(self.interval_s):
            self.samples.append(float(nvidia_smi("--query-gpu=utilization.gpu")[0][0]))
            used = {pid: int(mib) * MiB for pid, mib in nvidia_smi("--query-compute-apps=pid,used_memory")
                    if mib.isdigit() and is_trial(pid)}
            for pid, n_bytes in used.items():
                self.process_peaks[pid] = max(self.process_peaks.get(pid, 0), n_bytes)
            self.together_peak = max(self.together_peak, sum(used.values()))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> GpuUsage:
        self._stopped.set()
        self._thread.join()
        return GpuUsage(sum(self.samples) / len(self.samples) if self.samples else math.nan,
                        max(self.process_peaks.values(), default=0), self.together_peak)


def sweep_constants(model: str) -> dict:
    """The settings every trial of the benchmark's sweeps shares (its seeds included)."""
    constants = trial_config(model, STEPS) | {"lr": 3e-5, "batch_size": 32, "max_seq_length": 64,
                                              "eval_steps": STEPS, "precision": "bf16", "seeds": TRIALS}
    constants.pop("seed")
    return constants


def probe_prediction(model: str):
    """The probe's measurement of the benchmark's trial, as the launcher takes it: {key: Probe}."""
    from sentsweep.sweep.compute.gpu_packing import measure_on_cluster, probe_configs, probe_peaks

    return probe_peaks(probe_configs(sweep_constants(model), {}, [("seeds", {})]),
                       measure_on_cluster(cpus=1.0, timeout_s=None))


@dataclass(frozen=True)
class GpuHours:
    """The protocol card's estimate of a sweep's GPU-hours against what its trials recorded."""

    estimated: str  # the card's 'estimated GPU-hours' cell: a number, or "not estimated"
    source: str  # the card's source cell for it
    recorded: float  # the sum of the trial runs' `system/gpu_seconds` (wall seconds x fraction), in hours

    def line(self) -> str:
        try:
            ratio = f" ({float(self.estimated) / self.recorded:.2f}x the recorded)"
        except (ValueError, ZeroDivisionError):  # not estimated, or nothing recorded
            ratio = ""
        return (f"the card estimated {self.estimated} GPU-hours of steps{ratio}, the trials recorded "
                f"{self.recorded:.3g} ({self.source})")


def experiment_name(fraction: float) -> str:
    """The sweep's name and MLflow experiment at `fraction` GPU per trial."""
    return f"gpu-packing-{fraction}"


def tracking_uri(folder: Path) -> str:
    """The MLflow store of the benchmark's sweeps, in `folder`."""
    return f"sqlite:///{folder / 'mlflow.db'}"


def sweep_definition(fraction: float, model: str):
    """The benchmark's sweep: one stage, the TRIALS seeds of `sweep_constants`."""
    from sentsweep.search_spaces.protocol import project_protocol
    from sentsweep.sweep import Stage, SweepDefinition

    return SweepDefinition(name=experiment_name(fraction), description="fractional GPU packing",
                           protocol=project_protocol(sweep_constants(model), {}),
                           stages=[Stage("seeds", lambda args: {})])


def sweep_argv(fraction: float, model: str, folder: Path) -> list[str]:
    """The command line of the TRIALS-seed sweep at `fraction` GPU per trial, its store and outputs in `folder`."""
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR

    cpus = max(1.0, (os.cpu_count() or 1) * fraction)
    # the demo data, named: it stands in for data not given in a --quick run only
    return ["--model", model, "--tracking-uri", tracking_uri(folder), "--experiment", experiment_name(fraction),
            "--corpus", str(CORPUS_FILE), "--sts-dir", str(DEMO_DIR),
            "--output-dir", str(folder / f"out-{fraction}"), "--gpus-per-trial", str(fraction),
            "--cpus-per-trial", str(cpus)]


def card_gpu_hours(fraction: float, model: str, folder: Path) -> tuple[str, str]:
    """(value, source) of the 'estimated GPU-hours' row of the sweep's card (`--dry-run`), as a user would see it
    before running the sweep again: from the probe its launch kept in the storage path."""
    from sentsweep.sweep import run_sweep

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = run_sweep(sweep_definition(fraction, model), [*sweep_argv(fraction, model, folder), "--dry-run"])
    assert code == 0, f"the dry run at {fraction} GPU per trial failed (exit code {code})"
    row = next(line for line in output.getvalue().splitlines()
               if line.startswith("| compute budget | estimated GPU-hours |"))
    value, source = [cell.strip() for cell in row.strip("|").split("|")][2:]
    return value, source


def recorded_gpu_hours(fraction: float, folder: Path) -> float:
    """The GPU-hours the trial runs of the sweep's last run recorded (`system/gpu_seconds`, summed)."""
    from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
    from sentsweep.tracking.names import mlflow_metric_key

    uri, experiment = tracking_uri(folder), experiment_name(fraction)
    runs = fetch_trial_runs(uri, experiment, latest_sweep_run_id(uri, experiment))
    return float(runs[f"metrics.{mlflow_metric_key('gpu_seconds')}"].fillna(0.0).sum()) / 3600


def sweep_trials_per_hour(fraction: float, model: str, folder: Path) -> tuple[float, GpuUsage, str, GpuHours]:
    """(trials per hour, GPU usage, the launcher's GPU packing line, the card's GPU-hours against the recorded) of
    the TRIALS-seed sweep at `fraction` GPU per trial."""
    from sentsweep.sweep import run_sweep

    sampler = GpuSampler()
    sampler.start()
    start = time.perf_counter()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = run_sweep(sweep_definition(fraction, model), sweep_argv(fraction, model, folder))
    seconds = time.perf_counter() - start
    usage = sampler.stop()
    assert code == 0, f"the sweep at {fraction} GPU per trial failed (exit code {code})"
    packing = next((line for line in output.getvalue().splitlines() if line.startswith("GPU packing:")), "")
    hours = GpuHours(*card_gpu_hours(fraction, model, folder), recorded_gpu_hours(fraction, folder))
    return 3600 * TRIALS / seconds, usage, packing, hours


def run() -> list[Result]:
    import ray
    import torch

    if not torch.cuda.is_available():
        print("gpu_packing: skipped, no CUDA GPU on this machine")
        return []
    from sentsweep.errors import InputError
    from sentsweep.sweep.compute.cluster import cluster_nodes
    from sentsweep.sweep.compute.gpu_packing import (
        GiB,
        check_fraction,
        choose_fraction,
        fitting_trials,
        gpu_cpu_cap,
        trial_footprint,
        trials_sharing,
    )

    model = benchmark_model_path()
    with tempfile.TemporaryDirectory() as folder:
        ray.init(num_gpus=1, include_dashboard=False, log_to_driver=False)  # one GPU, shared by fractions
        try:
            probes = probe_prediction(model)
            (key, probe), = probes.items()
            footprint = trial_footprint(probe.peak_bytes)
            print(f"gpu_packing: probe of {key.describe()} on {probe.gpu_name} ({probe.gpu_memory_bytes / GiB:.1f} "
                  f"GiB available): peak {probe.peak_bytes / GiB:.2f} GiB allocated, counted {footprint / GiB:.2f} "
                  f"GiB per trial, {fitting_trials(probes)} fit; auto: "
                  f"{choose_fraction(probes, gpu_cpu_cap(1.0, cluster_nodes()))[0]:g} GPU per trial")
            measured = {}
            for fraction in FRACTIONS:
                try:
                    check_fraction(fraction, probes)
                except InputError as refused:
                    print(f"gpu_packing: {fraction} GPU per trial not run, the probe refuses it: {refused}")
                    continue
                rate, usage, packing, hours = sweep_trials_per_hour(fraction, model, Path(folder))
                measured[fraction] = rate, usage
                together = min(TRIALS, trials_sharing(fraction)) * footprint
                print(f"gpu_packing: {fraction} GPU per trial: {rate:,.1f} trials/h, GPU busy "
                      f"{usage.utilisation:.0f}%; peak per trial process {usage.trial_peak_bytes / GiB:.2f} GiB "
                      f"against {footprint / GiB:.2f} GiB predicted, all trials together "
                      f"{usage.all_trials_peak_bytes / GiB:.2f} GiB against {together / GiB:.2f} GiB predicted "
                      f"({packing}); {hours.line()}")
        finally:
            ray.shutdown()
    whole_gpu = measured[1.0][0]
    return [Result(f"{TRIALS} MiniLM TSDAE trials, {fraction} GPU each (GPU busy {usage.utilisation:.0f}%)",
                   rate, whole_gpu, "trials/h", "1.0 GPU per trial")
            for fraction, (rate, usage) in measured.items()]


if __name__ == "__main__":
    for result in run():
        print(result.row())
