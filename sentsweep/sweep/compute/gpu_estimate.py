"""A sweep's GPU-hours estimated before it runs (`--dry-run`), from the step times earlier launches' GPU probes
measured (`sentsweep.sweep.compute.probe_records`).

    estimated GPU-hours = sum over the sweep's training trials t of steps(t) x seconds_per_step(key(t)) x f / 3600

where steps(t) is the trial's optimisation steps as the card counts them (`sentsweep.sweep.launch.card.stage_points`),
seconds_per_step(key) the median step time of the probe of the trial's `ProbeKey` (model, method, batch size,
max_seq_length, precision: what a step's cost depends on, as its memory does), and f the GPU fraction a trial
holds: --gpus-per-trial, or for `auto` what `choose_fraction` chooses on the stored probes' memory, without the
cap of the GPU nodes' CPUs (a dry run starts no Ray and knows no cluster). It is the quantity a run records as
`gpu_seconds` (`sentsweep.trainables.compute`: wall seconds x fraction), less what the steps do not hold:
evaluation, checkpoints and a trial's start-up (model loading, preparation) are not counted. The probe times a
trial alone on a whole GPU; trials sharing a GPU that keep it busy step slower, so with a fraction below 1 the
estimate is a lower bound (at most 1/f below, when each trial's share of the GPU's throughput is its fraction).

All the trials' keys must have been measured on one GPU: of the GPUs in the file, the one with step times for the
most of the sweep's keys (the most recently measured among equals). Where a key has none there, the card says
which and that a launch on the GPU measures it, rather than estimate part of the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.sweep.compute.gpu_packing import Probe, ProbeKey, choose_fraction
from sentsweep.sweep.compute.probe_records import StoredProbe
from sentsweep.sweep.config.options import GPUS_AUTO

NOT_COUNTED = "evaluation, checkpoints and start-up not counted"


@dataclass(frozen=True)
class GpuEstimate:
    """The estimate in GPU-hours (None where there is none) and the card's value and source cells."""

    gpu_hours: float | None
    value: str
    source: str


def estimate_gpu_hours(trials: Sequence[tuple[ProbeKey, int]], requested: float | str, path: Path | None,
                       stored: Sequence[StoredProbe]) -> GpuEstimate:
    """The estimate for `trials` ((key, training steps) of every training trial, one per seed) at --gpus-per-trial
    `requested`, from the probes `stored` in the file at `path` (None: the storage path keeps no file)."""
    if requested == 0:
        return GpuEstimate(0.0, "0", "--gpus-per-trial 0: the trials run on CPU")
    if not trials:
        return GpuEstimate(0.0, "0", "no trial of this sweep trains")
    if path is None:
        return GpuEstimate(None, "not estimated", "the storage path is a URI (s3://...), where no GPU probes file "
                           "is kept")
    keys = list(dict.fromkeys(key for key, _ in trials))
    gpu, probes = _best_gpu(keys, stored)
    missing = [key for key in keys if key not in probes]
    if missing:
        on = f" on the {gpu}" if gpu else ""
        return GpuEstimate(None, "not estimated", f"no probe{on} measured a step of "
                           f"{'; '.join(key.describe() for key in missing)} ({path}); a launch on the GPU measures it")
    if requested == GPUS_AUTO:
        try:
            fraction, _ = choose_fraction({key: probes[key].probe for key in keys}, cpu_cap=None)
        except InputError as error:
            return GpuEstimate(None, "not estimated", f"{error} (the {gpu} probes in {path})")
        share = (f"auto = {fraction:g} GPU per trial (the stored probes' memory; no CPU cap: a dry run knows no "
                 "cluster)")
    else:
        fraction, share = float(requested), f"{float(requested):g} GPU per trial"
    hours = sum(steps * probes[key].probe.seconds_per_step * fraction for key, steps in trials) / 3600
    dates = sorted(probes[key].measured_at[:10] for key in keys)
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return GpuEstimate(hours, f"{hours:.3g}", f"steps x seconds per step of the {gpu} probes in {path} (measured "
                       f"{when}) x {share} / 3600; {NOT_COUNTED}; trials sharing a GPU may step slower")


def _best_gpu(keys: list[ProbeKey], stored: Sequence[StoredProbe]) -> tuple[str | None, dict[ProbeKey, StoredProbe]]:
    """(the GPU with step times for the most of `keys`, the newest among equals; {key: its probe there})."""
    by_gpu: dict[str, dict[ProbeKey, StoredProbe]] = {}
    for entry in stored:
        if entry.key in keys and _timed(entry.probe):
            by_gpu.setdefault(entry.probe.gpu_name, {})[entry.key] = entry
    if not by_gpu:
        return None, {}
    gpu = max(by_gpu, key=lambda name: (len(by_gpu[name]), max(e.measured_at for e in by_gpu[name].values())))
    return gpu, by_gpu[gpu]


def _timed(probe: Probe) -> bool:
    return probe.seconds_per_step is not None and not probe.out_of_memory
