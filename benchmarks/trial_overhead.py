"""Where a trial's seconds go: sentsweep's TSDAE trainable against the plain one (benchmarks/plain_tune_tsdae.py) at
equal steps, in this process on one thread, in CPU seconds (wall seconds on a shared machine measure the
neighbours), on the tiny model and on all-MiniLM-L6-v2.

For each model: one trial of each first (the process's one-off costs: imports, the tokenizer's and the model's
first load), then `--rounds` rounds alternating sentsweep's and the plain trial; each side's best round counts. The
parts are what each trial reports of itself: preparation, evaluations, checkpoints (sentsweep's only: it saves one
at every evaluation and hands it to its session; here the in-process session's copy), and training the rest.

    .venv/bin/python -m benchmarks.trial_overhead [--rounds 2] [--tiny-steps 300] [--minilm-steps 20]"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from benchmarks.common import Result, benchmark_model_path

EVALUATIONS = 6  # as the headline benchmark's trials
PARTS = ("preparation_seconds", "evaluation_seconds", "checkpoint_seconds")


def parts(reports: list[dict]) -> dict:
    """{part: its largest value over `reports`} for each of PARTS (0 where none gives it)."""
    return {part: max((float(report.get(part, 0.0)) for report in reports), default=0.0) for part in PARTS}


def trials(model: str, steps: int):
    """(sentsweep's trial, the plain trial): callables training TSDAE on `model` for `steps` steps on the demo data,
    each returning its last report."""
    import benchmarks.plain_tune_tsdae as plain
    from sentsweep.data import read_corpus, read_scored_pairs
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
    from sentsweep.trainables.catalog import train
    from sentsweep.trainables.session import LocalSession

    eval_steps = max(1, steps // EVALUATIONS)

    def ours() -> dict:
        session = LocalSession()
        train(dict(method="tsdae", model=model, corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                   test_file=str(DEMO_DIR / "sts-test.csv"), eval_format="stsb", noise_type="delete",
                   noise_ratio=0.6, pooling="mean", tie_decoder=False, lr=plain.LR, batch_size=plain.BATCH_SIZE,
                   max_steps=steps, eval_steps=eval_steps, max_seq_length=plain.MAX_SEQ_LENGTH, seed=0), session)
        return parts(session.reports)

    pairs = read_scored_pairs(DEMO_DIR / "sts-dev.csv", "stsb", "dev")
    dev = (list(pairs.sentences1), list(pairs.sentences2), list(pairs.scores))
    corpus = read_corpus(CORPUS_FILE)

    def theirs() -> dict:
        reports = []
        report, plain.tune.report = plain.tune.report, lambda metrics, **_: reports.append(dict(metrics))
        try:
            plain.tsdae_trainable(dict(model=model, noise_ratio=0.6, pooling="mean", seed=0, max_steps=steps,
                                       eval_steps=eval_steps), corpus=corpus, dev=dev)
        finally:
            plain.tune.report = report
        return parts(reports)

    return ours, theirs


def measure(model: str, steps: int, rounds: int) -> dict:
    """{"sentsweep"/"plain": (best CPU seconds, that round's wall seconds, its parts' seconds)} (module docstring)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        sides = dict(zip(("sentsweep", "plain"), trials(model, steps)))
        with contextlib.redirect_stdout(io.StringIO()):
            for side in sides.values():
                side()  # the one-off costs
        taken: dict = {name: [] for name in sides}
        for _ in range(rounds):
            for name, side in sides.items():
                cpu, wall = time.process_time(), time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):  # the trainer's printed logs
                    seconds = side()
                taken[name].append((time.process_time() - cpu, time.perf_counter() - wall, seconds))
    finally:
        torch.set_num_threads(threads)
    return {name: min(rows, key=lambda row: row[0]) for name, rows in taken.items()}


def table(figures: dict) -> str:
    """Seconds per trial by part (the parts in wall seconds as the trial measured them; training the CPU rest)."""
    lines = ["| per trial | sentsweep | plain | sentsweep / plain |", "|---|---|---|---|"]
    (ours_cpu, ours_wall, ours_parts), (plain_cpu, plain_wall, plain_parts) = figures["sentsweep"], figures["plain"]
    lines.append(f"| CPU, best of the rounds | {ours_cpu:.2f} s | {plain_cpu:.2f} s | {ours_cpu / plain_cpu:.2f}x |")
    lines.append(f"| wall, that round | {ours_wall:.2f} s | {plain_wall:.2f} s | |")
    for part in PARTS:
        lines.append(f"| {part.replace('_seconds', '')} (wall, the trial's own reports) | {ours_parts[part]:.2f} s | "
                     f"{plain_parts[part]:.2f} s | |")
    return "\n".join(lines)


def run(rounds: int = 2, tiny_steps: int = 300, minilm_steps: int = 20) -> list[Result]:
    import os

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.models import build_tiny_model
    from sentsweep.sweep.launch.launcher import read_corpus_pairs_text

    results = []
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):  # fit writes checkpoints/ where it runs
        tiny = str(build_tiny_model(Path(folder) / "tiny", read_corpus(CORPUS_FILE) + read_corpus_pairs_text()))
        for name, model, steps in (("tiny model", tiny, tiny_steps),
                                   ("all-MiniLM-L6-v2", benchmark_model_path(), minilm_steps)):
            load = os.getloadavg()[0]
            figures = measure(model, steps, rounds)
            print(f"\n{name}, TSDAE, {steps} steps, {EVALUATIONS} evaluations, batch 8, max_seq_length 32, one "
                  f"thread, best of {rounds} alternating rounds (load average {load:.1f} at the start):\n")
            print(table(figures))
            results.append(Result(f"TSDAE trial on the {name}, {steps} steps: trials per CPU-hour",
                                  3600 / figures["sentsweep"][0], 3600 / figures["plain"][0], "trials/h",
                                  "the plain trainable", goal=1 / 1.05))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tiny-steps", type=int, default=300)
    parser.add_argument("--minilm-steps", type=int, default=20)
    args = parser.parse_args()
    for result in run(args.rounds, args.tiny_steps, args.minilm_steps):
        print(result.row())
