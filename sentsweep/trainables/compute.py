"""A trial's compute, summed over its attempts: CPU seconds, GPU seconds and wall seconds.

- `cpu_seconds`: the trial process's CPU time (user + system, every thread) and that of its children that have
  ended (`resource.getrusage`), from the trial's start;
- `gpu_seconds`: wall seconds times the GPU fraction the trial held (its Ray request: 0.25 of a GPU for an hour
  is 900 GPU seconds; 0 on CPU), the share of a device the trial kept from others whether it used it or not;
- `wall_seconds`: the trial's elapsed time.

Every report carries the totals so far (the MLflow run's latest value is the trial's total), and every checkpoint
keeps them (`COMPUTE_FILE`): a trial restored from a checkpoint (a retry, a --resume) goes on from that total, so
its run's compute adds up across attempts. What an attempt spent after its last checkpoint is not counted: no
checkpoint holds it.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

COMPUTE_FILE = "compute.json"  # in every checkpoint of a trial: its compute up to that checkpoint


@dataclass(frozen=True)
class Compute:
    """Seconds of compute; as metrics, under these field names."""

    cpu_seconds: float = 0.0
    gpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    def __add__(self, other: Compute) -> Compute:
        return Compute(self.cpu_seconds + other.cpu_seconds, self.gpu_seconds + other.gpu_seconds,
                       self.wall_seconds + other.wall_seconds)

    def as_metrics(self) -> dict[str, float]:
        return asdict(self)


COMPUTE_METRICS = tuple(Compute().as_metrics())
# The training loop's wall-clock measurements of where a trial's time goes (sentsweep.trainables.loop): like the
# compute totals, values a seed does not fix.
TIMING_METRICS = ("preparation_seconds", "seconds_per_step", "evaluation_seconds", "checkpoint_seconds")


def process_cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its ended, waited-for children, user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class ComputeMeter:
    """Measures one attempt of a trial from its construction, on top of what earlier attempts spent (`resume`)."""

    def __init__(self, gpu_fraction: float, wall_clock: Callable[[], float] = time.monotonic,
                 cpu_clock: Callable[[], float] = process_cpu_seconds) -> None:
        self.gpu_fraction = gpu_fraction
        self._wall_clock, self._cpu_clock = wall_clock, cpu_clock
        self._wall_start, self._cpu_start = wall_clock(), cpu_clock()
        self._earlier = Compute()

    def resume(self, earlier: Compute) -> None:
        """Count what the trial's earlier attempts spent, as its checkpoint says."""
        self._earlier = earlier

    def total(self) -> Compute:
        wall = self._wall_clock() - self._wall_start
        return self._earlier + Compute(self._cpu_clock() - self._cpu_start, wall * self.gpu_fraction, wall)


def write_compute(checkpoint_dir: str | Path, compute: Compute) -> None:
    (Path(checkpoint_dir) / COMPUTE_FILE).write_text(json.dumps(compute.as_metrics()), encoding="utf-8")


def read_compute(checkpoint_dir: str | Path) -> Compute:
    """The compute a checkpoint holds; nothing for a checkpoint written before compute was recorded."""
    path = Path(checkpoint_dir) / COMPUTE_FILE
    return Compute(**json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else Compute()
