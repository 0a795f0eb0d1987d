"""Fractional GPUs: TSDAE trials per hour on one GPU with 1.0, 0.5 and 0.25 GPU per trial, and how busy the
GPU is meanwhile.

The same TRIALS trials (all-MiniLM-L6-v2, TSDAE, bf16 autocast, batch size 32, on the demo corpus) run as a
seeds sweep through the launcher, once per fraction, with the machine's CPU cores shared in the same
proportion. The reference is one trial per GPU. GPU utilisation is nvidia-smi's, sampled every second while
the sweep runs. Needs a CUDA machine; elsewhere it prints that it skipped.
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
from pathlib import Path

from benchmarks.common import Result, benchmark_model_path
from benchmarks.sweep_overhead import trial_config

TRIALS, STEPS, FRACTIONS = 4, 300, (1.0, 0.5, 0.25)


class UtilisationSampler:
    """Mean GPU utilisation (%) from nvidia-smi, sampled every `interval_s` between start() and stop()."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stopped.wait(self.interval_s):
            output = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                                    capture_output=True, text=True, check=True).stdout
            self.samples.append(float(output.split()[0]))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> float:
        self._stopped.set()
        self._thread.join()
        return sum(self.samples) / len(self.samples) if self.samples else math.nan


def sweep_trials_per_hour(fraction: float, model: str, folder: Path) -> tuple[float, float]:
    """(trials per hour, mean GPU utilisation %) of the TRIALS-seed sweep at `fraction` GPU per trial."""
    from sentsweep.search_spaces.protocol import project_protocol
    from sentsweep.sweep import Stage, SweepDefinition, run_sweep

    constants = trial_config(model, STEPS) | {"lr": 3e-5, "batch_size": 32, "max_seq_length": 64,
                                              "eval_steps": STEPS, "precision": "bf16", "seeds": TRIALS}
    constants.pop("seed")
    definition = SweepDefinition(name=f"gpu-packing-{fraction}", description="fractional GPU packing",
                                 protocol=project_protocol(constants, {}), stages=[Stage("seeds", lambda args: {})])
    cpus = max(1.0, (os.cpu_count() or 1) * fraction)
    sampler = UtilisationSampler()
    sampler.start()
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = run_sweep(definition, ["--model", model, "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}",
                                      "--output-dir", str(folder / f"out-{fraction}"),
                                      "--gpus-per-trial", str(fraction), "--cpus-per-trial", str(cpus)])
    seconds = time.perf_counter() - start
    utilisation = sampler.stop()
    assert code == 0, f"the sweep at {fraction} GPU per trial failed (exit code {code})"
    return 3600 * TRIALS / seconds, utilisation


def run() -> list[Result]:
    import ray
    import torch

    if not torch.cuda.is_available():
        print("gpu_packing: skipped, no CUDA GPU on this machine")
        return []
    model = benchmark_model_path()
    with tempfile.TemporaryDirectory() as folder:
        ray.init(num_gpus=1, include_dashboard=False, log_to_driver=False)  # one GPU, shared by fractions
        try:
            measured = {fraction: sweep_trials_per_hour(fraction, model, Path(folder)) for fraction in FRACTIONS}
        finally:
            ray.shutdown()
    whole_gpu = measured[1.0][0]
    return [Result(f"{TRIALS} MiniLM TSDAE trials, {fraction} GPU each (GPU busy {utilisation:.0f}%)",
                   rate, whole_gpu, "trials/h", "1.0 GPU per trial")
            for fraction, (rate, utilisation) in measured.items()]


if __name__ == "__main__":
    for result in run():
        print(result.row())
