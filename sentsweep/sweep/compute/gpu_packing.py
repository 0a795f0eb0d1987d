"""How many trials may share a GPU's memory, measured before any trial starts.

**GPU packing by measured memory.** `--gpus-per-trial 0.25` lets four trials share a GPU, but Ray fractions are
bookkeeping only: nothing stops four trials that each need 30 GB from sharing an 80 GB GPU and failing with
out-of-memory errors one after the other. Before a sweep on GPUs, a short probe per distinct `ProbeKey` (model,
method, batch size, max sequence length, precision: what sets a trial's memory) runs a few real training steps
of that trial's own setup on a GPU and measures its peak memory (`probe_trial`). `settle_gpus` then checks a
requested fraction (k = floor(1/fraction) trials share a GPU: k footprints must fit in its memory) or, with
`--gpus-per-trial auto`, chooses the largest 1/k such that k footprints fit, capped at the trials a GPU node's
CPUs can run at once. A trial's footprint is its measured peak with a margin (see `MEMORY_MARGIN`,
`CUDA_CONTEXT_BYTES`). Without a GPU the step is skipped with one line saying why. The measurement is a function
`measure(key, config) -> Probe | None`, so the packing logic is tested with a stub. The probe also times its
steps (the training loop's `seconds_per_step`); every launch keeps its probes in the storage path
(`sentsweep.sweep.compute.probe_records`), from which the protocol card estimates a sweep's GPU-hours.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from sentsweep.data import read_corpus
from sentsweep.errors import InputError
from sentsweep.search_spaces.param_spaces import values_to_validate
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep.config.options import GPUS_AUTO
from sentsweep.trainables.catalog import get_method, setting_default, train

if TYPE_CHECKING:
    from sentsweep.sweep.compute.cluster import Node

GiB = 2**30

# Steps a probe trains: the first step allocates the optimiser's state, the second is the first to hold
# parameters, gradients, optimiser state and activations at once; a third is cheap insurance. Its step time is the
# median of the three, which leaves the first step's one-off costs (allocation, kernel selection) out.
PROBE_STEPS = 3
# A trial's footprint on a shared GPU is its measured peak * (1 + MEMORY_MARGIN) + CUDA_CONTEXT_BYTES.
# The margin covers what `torch.cuda.max_memory_allocated` does not see of the trial's own tensors: the caching
# allocator holds more than it hands out (fragmentation: reserved is commonly 5-20% above allocated in
# transformer training) and a run's peak varies a little with its batches. For methods that train on the corpus
# (every unsupervised one) batch length is not part of it: the probe trains on the corpus's longest sentences, so
# its batches are padded as long as any a trial meets. Methods that train on labelled pairs or generated queries
# meet their first batches in the probe, whose shorter padding the margin covers too.
MEMORY_MARGIN = 0.25
# Every trial process also holds a CUDA context and the libraries' handles, outside PyTorch's allocator
# statistics: about 0.3-0.6 GiB with PyTorch 2 on current GPUs; 1 GiB leaves room.
CUDA_CONTEXT_BYTES = 1 * GiB
RAY_FRACTION_SCALE = 10_000  # Ray's resource quantities have 4 decimals: a fraction is rounded down to them
KEY_SETTINGS = ("model", "method", "batch_size", "max_seq_length", "precision")



@dataclass(frozen=True)
class ProbeKey:
    """What sets a trial's GPU memory, as far as a sweep's axes usually vary it: trials with equal keys are
    probed once. Settings outside the key take the first value of their axis; an axis that changes the model's
    size (an untied decoder) is covered only as far as the margin goes."""

    model: str
    method: str
    batch_size: int
    max_seq_length: int
    precision: str

    def describe(self) -> str:
        return (f"{self.method} on {Path(self.model).name or self.model} (batch size {self.batch_size}, "
                f"max_seq_length {self.max_seq_length}, {self.precision})")


@dataclass(frozen=True)
class Probe:
    """One probe's measurement: the peak bytes PyTorch allocated; the GPU memory the trials can have (free when
    the probe started, its own CUDA context given back: what others hold, such as a driver that computed the
    baseline on the same GPU, is not the trials'); the GPU's name; `out_of_memory` when the probe itself did not
    fit (its peak is then where it failed); the median seconds of its training steps alone on the whole GPU (None
    when it ran out of memory)."""

    peak_bytes: int
    gpu_memory_bytes: int
    gpu_name: str
    out_of_memory: bool = False
    seconds_per_step: float | None = None


def probe_configs(constants: Mapping, method_settings: Mapping[str, Mapping], stages: list[tuple[str, dict]]
                  ) -> dict[ProbeKey, dict]:
    """{key: one full trial config of that key} over every stage: each combination of the values the key's
    settings take on the stage's axes (all of a grid, a range's bounds), the other axes at their first value,
    as `sentsweep.sweep.launch.launcher.validate_axes` builds its points. Methods that train nothing (the lexical
    baselines) are left out: they have no training step to measure."""
    configs: dict[ProbeKey, dict] = {}
    for _, axes in stages:
        first_point = dict(constants) | {name: values_to_validate(axis)[0] for name, axis in axes.items()}
        varied = [name for name in KEY_SETTINGS if name in axes]
        for values in itertools.product(*(values_to_validate(axes[name]) for name in varied)):
            point = with_method_settings(first_point | dict(zip(varied, values)), method_settings, axes)
            if not get_method(point["method"]).trains:
                continue
            configs.setdefault(probe_key(point), point)
    return configs


def probe_key(config: Mapping) -> ProbeKey:
    """The `ProbeKey` of a trial's config."""
    return ProbeKey(str(config["model"]), config["method"], int(config["batch_size"]), int(config["max_seq_length"]),
                    config.get("precision", setting_default("precision")))


def probe_peaks(configs: Mapping[ProbeKey, dict], measure: Callable[[ProbeKey, dict], Probe | None]
                ) -> dict[ProbeKey, Probe] | None:
    """Each key measured once; None as soon as a measurement says there is no GPU to measure on."""
    probes = {}
    for key, config in configs.items():
        probe = measure(key, config)
        if probe is None:
            return None
        probes[key] = probe
    return probes


def trial_footprint(peak_bytes: int) -> int:
    """Bytes of GPU memory a trial with this measured peak is counted for (see MEMORY_MARGIN)."""
    return math.ceil(peak_bytes * (1 + MEMORY_MARGIN)) + CUDA_CONTEXT_BYTES


def fraction_for(trials_per_gpu: int) -> float:
    """The Ray GPU fraction that lets exactly `trials_per_gpu` trials share a GPU: 1/k rounded down to Ray's
    precision (1/3 -> 0.3333: three fit, a fourth does not)."""
    return math.floor(RAY_FRACTION_SCALE / trials_per_gpu) / RAY_FRACTION_SCALE


def trials_sharing(fraction: float) -> int:
    """How many trials Ray puts on one GPU at `fraction` GPU each (whole GPUs: one)."""
    return 1 if fraction >= 1 else math.floor(1 / fraction + 1e-9)


def _largest(probes: Mapping[ProbeKey, Probe]) -> tuple[ProbeKey, Probe]:
    return max(probes.items(), key=lambda item: item[1].peak_bytes)


def _memory(probes: Mapping[ProbeKey, Probe]) -> int:
    """The GPU memory the trials can have, the least any probe saw."""
    return min(probe.gpu_memory_bytes for probe in probes.values())


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / GiB:.1f} GiB"


def _gpu_text(probes: Mapping[ProbeKey, Probe]) -> str:
    return f"the {_gib(_memory(probes))} available on the {_largest(probes)[1].gpu_name}"


def _footprint_text(key: ProbeKey, probe: Probe) -> str:
    return (f"a trial of {key.describe()} peaks at {_gib(probe.peak_bytes)} (counted "
            f"{_gib(trial_footprint(probe.peak_bytes))} with the {MEMORY_MARGIN:.0%} margin and "
            f"{_gib(CUDA_CONTEXT_BYTES)} CUDA context)")


def fitting_trials(probes: Mapping[ProbeKey, Probe]) -> int:
    """How many of the largest trial fit in the GPU memory available; refuses when not even one does."""
    key, probe = _largest(probes)
    if probe.out_of_memory:
        raise InputError(f"a trial of {key.describe()} ran out of {_gpu_text(probes)} in the GPU memory probe (at "
                         f"{_gib(probe.peak_bytes)}): lower the batch size or max_seq_length, or use bf16")
    fitting = _memory(probes) // trial_footprint(probe.peak_bytes)
    if fitting < 1:
        raise InputError(f"{_footprint_text(key, probe)}: more than {_gpu_text(probes)}; lower the batch size or "
                         "max_seq_length, or use bf16")
    return fitting


def choose_fraction(probes: Mapping[ProbeKey, Probe], cpu_cap: int | None) -> tuple[float, str]:
    """(GPUs per trial, the line that says why) for --gpus-per-trial auto: the largest 1/k such that k of the
    largest trial fit in the GPU memory available, k at most `cpu_cap` (the trials a GPU node's CPUs run at once
    per GPU: more would leave the GPU's share idle)."""
    fitting = fitting_trials(probes)
    trials = max(1, min(fitting, cpu_cap)) if cpu_cap is not None else fitting
    capped = f", capped at {cpu_cap} by the GPU node's CPUs" if trials < fitting else ""
    return fraction_for(trials), (
        f"GPU packing: --gpus-per-trial auto = {fraction_for(trials):g}, {trials} trial(s) per GPU: "
        f"{_footprint_text(*_largest(probes))}, so {fitting} fit in {_gpu_text(probes)}{capped}")


def check_fraction(fraction: float, probes: Mapping[ProbeKey, Probe]) -> str:
    """Refuse (`InputError`) a requested fraction whose trials sharing a GPU would not fit in its memory, with
    the numbers and the fraction that fits; else the line that says it fits."""
    fitting = fitting_trials(probes)
    sharing = trials_sharing(fraction)
    key, probe = _largest(probes)
    if sharing > fitting:
        raise InputError(
            f"--gpus-per-trial {fraction:g} puts {sharing} trials on one GPU; {_footprint_text(key, probe)}, so "
            f"{sharing} need {_gib(sharing * trial_footprint(probe.peak_bytes))} of {_gpu_text(probes)}: "
            f"{fitting} fit, use --gpus-per-trial {fraction_for(fitting):g} (or auto)")
    return (f"GPU packing: --gpus-per-trial {fraction:g} puts {sharing} trial(s) on a GPU: "
            f"{_footprint_text(key, probe)}, so {fitting} fit in {_gpu_text(probes)}")


def settle_gpus(requested: float | str, configs: Mapping[ProbeKey, dict],
                measure: Callable[[ProbeKey, dict], Probe | None], gpu_possible: bool,
                cpu_cap: Callable[[], int | None], say: Callable[[str], None] = print) -> float:
    """The GPUs per trial to request, after one line on GPU packing (`say`): the requested number once its
    packing is checked, or the fraction the probe chooses for 'auto'. `gpu_possible`: a GPU node exists or may
    come (autoscaling); `cpu_cap()`: the CPU cap of `choose_fraction`, asked after the probe (an autoscaling
    cluster may have started the GPU node for it)."""
    if requested == 0:
        say("GPU packing: skipped, --gpus-per-trial 0 (trials run on CPU)")
        return 0.0
    if not gpu_possible:
        say("GPU packing: skipped, the Ray cluster has no GPU (trials run on CPU)")
        return 0.0
    unmeasured = 1.0 if requested == GPUS_AUTO else requested  # one trial per GPU when nothing is measured
    if not configs:
        say(f"GPU packing: skipped, no trial of this sweep trains (nothing to measure): {unmeasured:g} GPU per trial")
        return unmeasured
    probes = probe_peaks(configs, measure)
    if probes is None:
        say("GPU packing: skipped, the GPU Ray offers is no CUDA device PyTorch can use (memory not measured): "
            f"{unmeasured:g} GPU per trial")
        return unmeasured
    if requested == GPUS_AUTO:
        fraction, line = choose_fraction(probes, cpu_cap())
    else:
        fraction, line = requested, check_fraction(requested, probes)
    say(line)
    return fraction


def gpu_cpu_cap(cpus_per_trial: float, nodes: list[Node]) -> int | None:
    """The most trials per GPU that a GPU node's CPUs run at once (the best node's), None without GPU nodes."""
    caps = [math.floor(node.cpus / (cpus_per_trial * node.gpus) + 1e-9) for node in nodes if node.gpus >= 1]
    return max(caps) if caps else None


class ProbeSession:
    """A session that keeps no checkpoint and of the reports only the last step time: the probe measures, it does
    not report."""

    def __init__(self) -> None:
        self.seconds_per_step: float | None = None

    def latest_checkpoint_dir(self):
        return None

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        self.seconds_per_step = metrics.get("seconds_per_step", self.seconds_per_step)


def probe_trial_config(config: Mapping, folder: Path) -> dict:
    """The trial's config for the probe: PROBE_STEPS steps, evaluated at their start and end (the loop's own
    evaluation, whose memory counts too), its corpus cut to its longest sentences (written to `folder`: enough for
    the steps, and the held-out validation sentences), so that a method training on the corpus gets batches padded
    as long as the trial's longest, whatever the draw; no model kept, no tasks scored (both happen once, after
    training, in inference), a task-selected checkpoint selected on STS dev instead (no tasks to select on)."""
    config = {key: value for key, value in config.items() if key not in ("seeds", "__trial_index__")}
    steps = PROBE_STEPS
    needed = config["batch_size"] * steps
    if config.get("select_checkpoint") == "validation_loss" and not config.get("validation_file"):
        needed += config.get("validation_size", setting_default("validation_size"))
    if config.get("corpus"):  # (a sweep of methods that read no corpus has none)
        corpus = sorted(read_corpus(config["corpus"]), key=len, reverse=True)[:needed]
        (folder / "corpus.txt").write_text("\n".join(corpus) + "\n", encoding="utf-8")
        config["corpus"] = str(folder / "corpus.txt")
    if config.get("select_checkpoint") == "best_task_dev":
        config["select_checkpoint"] = "best_sts_dev"
    return config | {"seed": config.get("seed", 0), "max_steps": steps,
                     "epochs": None, "eval_steps": steps, "keep_model": False, "eval_tasks": None}


def probe_trial(config: dict) -> Probe | None:
    """Train `config` for the probe (`probe_trial_config`) on this process's GPU and measure its peak allocated
    memory (`torch.cuda.max_memory_allocated` from a reset of the peak statistics), the memory the trials can
    have (see `Probe`) and its steps' median time; None without CUDA. An out-of-memory error is a measurement too:
    the trial does not fit."""
    if not torch.cuda.is_available():
        return None
    free, total = torch.cuda.mem_get_info()  # with this process's CUDA context, which a trial's replaces
    torch.cuda.reset_peak_memory_stats()
    out_of_memory = False
    session = ProbeSession()
    with tempfile.TemporaryDirectory() as folder:
        try:
            train(probe_trial_config(config, Path(folder)), session)
        except torch.OutOfMemoryError:
            out_of_memory = True
    torch.cuda.synchronize()
    return Probe(torch.cuda.max_memory_allocated(), min(total, free + CUDA_CONTEXT_BYTES),
                 torch.cuda.get_device_name(), out_of_memory, None if out_of_memory else session.seconds_per_step)


def _started_then_probe(config: dict):
    """`probe_trial` as a Ray streaming generator: its first item says the probe has its GPU."""
    yield "started"
    yield probe_trial(config)


def measure_on_cluster(cpus: float, timeout_s: float | None) -> Callable[[ProbeKey, dict], Probe | None]:
    """`measure` that runs `probe_trial` as a Ray task on one whole GPU of the cluster (the trials' kind of
    node, started by the autoscaler if need be), in a worker process of its own that exits afterwards
    (max_calls=1), so that its CUDA context does not stay on the GPU the trials will share. A probe that does not
    get a GPU within `timeout_s` (--pending-timeout; the probe's own run is not limited) is an `InputError`, as is
    one that fails otherwise than by running out of memory (every trial would fail the same way)."""
    import ray
    from ray.exceptions import RayTaskError

    from sentsweep.sweep.compute.cluster import cluster_address, cluster_nodes, describe_cluster  # lazy: ray

    task = ray.remote(num_gpus=1, num_cpus=cpus, max_calls=1)(_started_then_probe)

    def measure(key: ProbeKey, config: dict) -> Probe | None:
        stream = task.remote(config)
        if not ray.wait([stream], timeout=timeout_s)[0]:
            ray.cancel(stream, force=True)
            raise InputError(f"--pending-timeout {timeout_s:g}: the GPU memory probe of {key.describe()} got no GPU "
                             f"within {timeout_s:g} s; {describe_cluster(cluster_address(), cluster_nodes())}")
        next(stream)  # "started"
        try:
            return ray.get(next(stream))
        except RayTaskError as error:
            reason = (str(error.cause).strip() or repr(error.cause)).splitlines()[-1]
            raise InputError(f"the GPU memory probe of {key.describe()} failed, as its trials would: "
                             f"{reason}") from None

    return measure
