"""Resume traps of the sweep tools this project replaces, tested: a driver killed (SIGKILL, no chance to save
anything) in the middle of an Optuna search over seeds (Ray Tune's Repeater) or of a race over seeds, then run
again with --resume, ends with every intended (configuration, seed) run finished exactly once and the table of
an uninterrupted run; a run whose trial Ray Tune had not saved yet ends KILLED, tagged `lost_trial`. Each driver
is its own process on its own embedded Ray, as `python sweeps/<name>.py` runs.
"""

import os
import signal

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs
from tests.cluster_helpers import at_least, sqlite_store, start_sweep, wait_for_saved_state, wait_until

TRIALS = ["--max-steps", "120", "--eval-steps", "60"]  # a few seconds each: the kill lands mid-sweep
SWEEPS = {
    "optuna": (["--search", "optuna", "--num-configs", "3", "--seeds", "2", "--poolings", "cls"], 6),
    "race": (["--race", "--seeds", "3", "--race-initial-seeds", "2"], None),
}


def table_lines(log: str) -> list[str]:
    """The sweep's table rows and, for a race, its per-configuration status lines."""
    return [line for line in log.splitlines() if line.startswith(("| 0.", "- noise_ratio="))]


def finished_trials(uri: str) -> list[str]:
    """The Ray trial ids of the sweep's finished trial runs."""
    try:
        runs = fetch_trial_runs(uri, "tsdae_deletion", None)
    except Exception:  # the sweep's experiment is created by the driver: not there yet
        return []
    return list(runs.loc[runs["status"] == "FINISHED", "ray_trial_id"]) if len(runs) else []


def finished(uri: str) -> int:
    return len(finished_trials(uri))


@pytest.mark.parametrize("kind", list(SWEEPS))
def test_a_killed_driver_resumes_each_configuration_and_seed_exactly_once(tmp_path, kind):
    arguments, expected_trials = SWEEPS[kind]
    reference_dir, crash_dir = tmp_path / "reference", tmp_path / "crash"
    reference_dir.mkdir(), crash_dir.mkdir()
    reference_uri, uri = (sqlite_store(folder) for folder in (reference_dir, crash_dir))
    reference = start_sweep("tsdae_deletion.py", reference_dir, "--tracking-uri", reference_uri, *arguments, *TRIALS)
    driver = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, *arguments, *TRIALS)
    done = wait_until(lambda: at_least(3, finished_trials(uri)), 300, what="3 finished trials")
    # Ray Tune has saved its experiment state (and the searcher's) since those trials finished
    wait_for_saved_state(crash_dir / "out" / "ray", done)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    finished_when_killed = finished(uri)

    # resumed while the reference may still run (its own process and Ray, as before)
    log_before = (crash_dir / "driver.log").stat().st_size
    resumed = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, "--resume", *arguments, *TRIALS)
    assert reference.wait(timeout=400) == 0, (reference_dir / "driver.log").read_text()[-3000:]
    reference_runs = fetch_trial_runs(reference_uri, "tsdae_deletion", None)
    assert finished_when_killed < len(reference_runs), "the driver was killed after the last trial"
    assert resumed.wait(timeout=400) == 0, (crash_dir / "driver.log").read_text()[-3000:]
    all_runs = fetch_trial_runs(uri, "tsdae_deletion", None)
    # a trial that started after Ray Tune's last save before the kill is unknown to the resumed sweep: its run
    # ends KILLED as a lost trial, and its configuration and seed run again under a new trial
    lost = all_runs["status"] != "FINISHED"
    assert (all_runs.loc[lost, "status"] == "KILLED").all(), all_runs[["ray_trial_id", "seed", "status"]]
    assert all("lost_trial" in MlflowClient(uri).get_run(run_id).data.tags for run_id in all_runs.loc[lost, "run_id"])
    runs = all_runs[~lost]
    assert not runs.duplicated(["config_hash", "seed"]).any(), runs[["config_hash", "seed", "status"]]
    # config hashes include the sweep's own paths, so the two sweeps' trials are matched by their params
    cells = ["params.noise_ratio", "params.pooling", "seed"]
    assert set(map(tuple, runs[cells].values)) == set(map(tuple, reference_runs[cells].values))
    if expected_trials:
        assert len(runs) == expected_trials
    log = (crash_dir / "driver.log").read_bytes()[log_before:].decode(errors="replace")
    assert table_lines(log) and table_lines(log) == table_lines((reference_dir / "driver.log").read_text())
