"""System overhead: K trials through Ray Tune + MLflow tracking against the same trainings in a plain loop.

Both run the same K TSDAE trials on the tiny model one after another (one trial at a time on all cores);
each trial is calibrated to about `--trial-seconds` of training. Goal: overhead under 10% for 60 s trials.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from benchmarks.common import Result, timed

TRIALS = 3


def trial_config(model: str, steps: int) -> dict:
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR

    return dict(method="tsdae", model=model, corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                test_file=str(DEMO_DIR / "sts-test.csv"), eval_format="stsb", noise_type="delete", noise_ratio=0.6,
                pooling="cls", tie_decoder=True, lr=1e-3, batch_size=8, max_steps=steps,
                eval_steps=max(1, steps // 4), max_seq_length=32, seed=0)


def run(trial_seconds: float = 60.0) -> list[Result]:
    import ray

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
    from sentsweep.models import build_tiny_model
    from sentsweep.search_spaces.protocol import project_protocol
    from sentsweep.sweep import Stage, SweepDefinition, run_sweep
    from sentsweep.sweep.launch.launcher import read_corpus_pairs_text
    from sentsweep.trainables.catalog import train
    from sentsweep.trainables.session import LocalSession

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        model = str(build_tiny_model(folder / "tiny", read_corpus(CORPUS_FILE) + read_corpus_pairs_text()))
        # A trial costs fixed (load, evaluations) + per-step time: two probes give both, after a first
        # training that pays the process's one-off costs (imports, first allocations), which would
        # otherwise count as fixed cost and stretch the trials.
        train(trial_config(model, 20), LocalSession())
        short = timed(lambda: train(trial_config(model, 200), LocalSession()))
        long = timed(lambda: train(trial_config(model, 1000), LocalSession()))
        per_step = max((long - short) / 800, 1e-4)
        steps = max(200, int(200 + (trial_seconds - short) / per_step))
        plain = timed(lambda: [train(trial_config(model, steps) | {"seed": s}, LocalSession()) for s in range(TRIALS)])

        constants = {k: v for k, v in trial_config(model, steps).items() if k != "seed"} | {"seeds": TRIALS}
        definition = SweepDefinition(name="overhead", description="overhead", protocol=project_protocol(constants, {}),
                                     stages=[Stage("seeds", lambda args: {})])
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            # the demo data, named: it stands in for data not given in a --quick run only
            code = run_sweep(definition, ["--model", model, "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}",
                                          "--corpus", str(CORPUS_FILE), "--sts-dir", str(DEMO_DIR),
                                          "--output-dir", str(folder / "out"), "--cpus-per-trial", "2"])
        tuned = time.perf_counter() - start
        ray.shutdown()
        assert code == 0
    # Rates in trials per hour; the ratio is plain time / tuned time (1.0 = no overhead).
    # The name gives the trial length actually measured; the calibration from two short probes is rough.
    return [Result(f"{TRIALS} trials of ~{plain / TRIALS:.0f} s via Ray Tune + MLflow", 3600 * TRIALS / tuned,
                   3600 * TRIALS / plain, "trials/h", "the same trainings in a plain loop", goal=0.9)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trial-seconds", type=float, default=60.0)
    for result in run(parser.parse_args().trial_seconds):
        print(result.row())
