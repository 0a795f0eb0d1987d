"""Resume traps of the sweep tools this project replaces, tested: a driver killed (SIGKILL, no chance to save
anything) in the middle of an Optuna search over seeds (Ray Tune's Repeater) or of a race over seeds, then run
again with --resume, ends with every intended (configuration, seed) run exactly once and the table of an
uninterrupted run. Each driver is its own process on its own embedded Ray, as `python sweeps/<name>.py` runs.
"""

import os
import signal
import time

import pytest

from sentsweep.analysis.runs import fetch_trial_runs
from tests.cluster_helpers import start_sweep, wait_until

TRIALS = ["--max-steps", "120", "--eval-steps", "60"]  # a few seconds each: the kill lands mid-sweep
SWEEPS = {
    "optuna": (["--search", "optuna", "--num-configs", "3", "--seeds", "2", "--poolings", "cls"], 6),
    "race": (["--race", "--seeds", "3", "--race-initial-seeds", "2"], None),
}


def table_lines(log: str) -> list[str]:
    """The sweep's table rows and, for a race, its per-configuration status lines."""
    return [line for line in log.splitlines() if line.startswith(("| 0.", "- noise_ratio="))]


def finished(uri: str) -> int:
    try:
        runs = fetch_trial_runs(uri, "tsdae_deletion", None)
    except Exception:  # the store is created by the driver: not there yet
        return 0
    return int((runs["status"] == "FINISHED").sum()) if len(runs) else 0


@pytest.mark.parametrize("kind", list(SWEEPS))
def test_a_killed_driver_resumes_each_configuration_and_seed_exactly_once(tmp_path, kind):
    arguments, expected_trials = SWEEPS[kind]
    reference_dir, crash_dir = tmp_path / "reference", tmp_path / "crash"
    reference_dir.mkdir(), crash_dir.mkdir()
    reference_uri, uri = (f"sqlite:///{folder / 'mlflow.db'}" for folder in (reference_dir, crash_dir))
    reference = start_sweep("tsdae_deletion.py", reference_dir, "--tracking-uri", reference_uri, *arguments, *TRIALS)
    driver = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, *arguments, *TRIALS)
    wait_until(lambda: finished(uri) >= 3, 300, what="3 finished trials")
    time.sleep(2)  # Ray Tune saves its experiment state (and the searcher's) every few seconds
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    assert reference.wait(timeout=400) == 0, (reference_dir / "driver.log").read_text()[-3000:]
    reference_runs = fetch_trial_runs(reference_uri, "tsdae_deletion", None)
    assert finished(uri) < len(reference_runs), "the driver was killed after the last trial"

    log_before = (crash_dir / "driver.log").stat().st_size
    resumed = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, "--resume", *arguments, *TRIALS)
    assert resumed.wait(timeout=400) == 0, (crash_dir / "driver.log").read_text()[-3000:]
    runs = fetch_trial_runs(uri, "tsdae_deletion", None)
    assert not runs.duplicated(["config_hash", "seed"]).any(), runs[["config_hash", "seed", "status"]]
    assert set(runs["status"]) == {"FINISHED"}
    # config hashes include the sweep's own paths, so the two sweeps' trials are matched by their params
    cells = ["params.noise_ratio", "params.pooling", "seed"]
    assert set(map(tuple, runs[cells].values)) == set(map(tuple, reference_runs[cells].values))
    if expected_trials:
        assert len(runs) == expected_trials
    log = (crash_dir / "driver.log").read_bytes()[log_before:].decode(errors="replace")
    assert table_lines(log) and table_lines(log) == table_lines((reference_dir / "driver.log").read_text())
