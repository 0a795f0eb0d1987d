"""Distributed and fault tolerant, with real components: Ray nodes from `ray start`, an MLflow server on 127.0.0.1.

Each test drives a sweep script as its own process (the driver), as `ray submit` would on a head node.
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from tests.helpers.cluster_helpers import (
    PROJECT,
    QUICK_NODE_DEATH,
    RAY_ENV,
    MlflowServer,
    RayCluster,
    at_least,
    sqlite_store,
    start_sweep,
    wait_for_saved_state,
    wait_until,
)

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

SHORT_TRIALS = ["--max-steps", "60", "--eval-steps", "20"]
EXPECTED_STEPS = [0, 20, 40, 60]
# Trials of a few seconds (besides their start), still running when a fault lands just after they started, and
# resumed from a checkpoint in their middle when their driver was killed.
LONG_TRIALS = ["--max-steps", "150", "--eval-steps", "50"]
LONG_STEPS = [0, 50, 100, 150]


@pytest.fixture()
def cluster_factory():
    clusters = []

    def make(**kwargs):
        cluster = RayCluster(**kwargs)
        clusters.append(cluster)
        return cluster

    yield make
    for cluster in clusters:
        cluster.stop()


def trial_runs(uri, experiment="tsdae_deletion"):
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    return [r for r in client.search_runs([found.experiment_id]) if r.data.tags.get("sweep_run_id")]


def assert_one_complete_run_per_trial(uri, expected_trials=8, steps=EXPECTED_STEPS):
    runs = trial_runs(uri)
    assert len(runs) == expected_trials
    assert len({r.data.tags["ray_trial_id"] for r in runs}) == expected_trials
    client = MlflowClient(uri)
    for run in runs:
        assert run.info.status == "FINISHED", run.data.tags.get("failure_reason")
        logged = sorted({m.step for m in client.get_metric_history(run.info.run_id, "sts_dev")})
        assert logged == steps
    return runs


@pytest.mark.parametrize("path", ["cluster.yaml", "cluster-onprem.yaml"])
def test_cluster_configs_pass_the_cluster_launcher_schema(path):
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = prepare_config(yaml.safe_load((PROJECT / path).read_text()))
    validate_config(config)
    commands = " ".join(config["head_start_ray_commands"])
    assert "mlflow server" in commands and "--host 127.0.0.1" in commands
    assert any("pip install" in c and "sentsweep" in c for c in config["setup_commands"])
    assert any("SENTSWEEP_STORAGE_PATH" in c for c in config["setup_commands"])


ASK_NODES = ("import sys; from ray._raylet import GcsClient; "
             "print(len(GcsClient(address=sys.argv[1]).get_all_node_info(timeout=10)))")


def test_test_clusters_run_with_token_authentication(cluster_factory):
    """Every node of RayCluster, and every driver, has the session's token: a client without it is refused."""
    cluster = cluster_factory(head_cpus=0)
    cluster.add_worker(cpus=1)  # joined with the token (add_worker waits until the head counts it alive)
    with_token = subprocess.run([sys.executable, "-c", ASK_NODES, cluster.address], env=RAY_ENV,
                                capture_output=True, text=True, timeout=120)
    assert with_token.stdout.split()[-1:] == ["2"], with_token.stderr[-2000:]
    no_token = {key: value for key, value in RAY_ENV.items() if not key.startswith("RAY_AUTH")}
    without = subprocess.run([sys.executable, "-c", ASK_NODES, cluster.address],
                             env=no_token | {"RAY_AUTH_MODE": "disabled", "HOME": cluster.temp_dir},
                             capture_output=True, text=True, timeout=120)
    assert without.returncode != 0 and "Authentication token is missing or incorrect" in without.stderr, (
        without.stdout + without.stderr[-2000:])


def test_sweep_survives_a_killed_worker_node(cluster_factory, tmp_path):
    # every trial runs on a worker node; the killed node's trials fail once the head counts the node dead; 4 trials
    # (2 ratios, CLS pooling, 2 seeds), 2 at a time
    cluster = cluster_factory(head_cpus=0, env=QUICK_NODE_DEATH)
    first_worker = cluster.add_worker(cpus=2)
    uri = sqlite_store(tmp_path)
    driver = start_sweep("tsdae_deletion.py", tmp_path, "--tracking-uri", uri, "--max-failures", "3", "--poolings",
                         "cls", *LONG_TRIALS, env={"RAY_ADDRESS": cluster.address})
    wait_until(lambda: len(trial_runs(uri)) >= 2, 240, what="trials running on the first worker")
    cluster.kill(first_worker)
    cluster.add_worker(cpus=2)
    assert driver.wait(timeout=600) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    assert_one_complete_run_per_trial(uri, 4, steps=LONG_STEPS)
    errors = list((tmp_path / "out" / "ray").rglob("error.txt"))
    assert errors, "no trial was running on the killed worker"


def finished_runs(uri):
    return [r for r in trial_runs(uri) if r.info.status == "FINISHED"]


def table_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("| 0.")]


def test_killed_then_stopped_driver_resumes_without_rerunning_finished_trials(shared_ray, tmp_path):
    # the drivers join the session's Ray (2 CPUs), as on a cluster: Ray ends the killed driver's trials; 6 trials
    # (3 ratios, CLS pooling, 2 seeds), 2 at a time: 3 finish before the kill, the others after it
    env = {"RAY_ADDRESS": shared_ray, "TUNE_GLOBAL_CHECKPOINT_S": "1"}
    grid = ("--ratios", "0.3", "0.6", "0.9", "--poolings", "cls", *LONG_TRIALS)
    reference_dir, crash_dir = tmp_path / "reference", tmp_path / "crash"
    reference_dir.mkdir(), crash_dir.mkdir()
    # the uninterrupted reference sweep runs beside the one crashed and resumed, on the same cluster, and is waited
    # for before its table is compared
    reference = start_sweep("tsdae_deletion.py", reference_dir, "--tracking-uri", sqlite_store(reference_dir),
                            *grid, env=env)
    uri = sqlite_store(crash_dir)
    # a progress line every second, in the log (Ray Tune restores the run's callbacks, and their interval, on resume)
    driver = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, *grid,
                         "--progress-interval", "1", env=env)
    finished = wait_until(lambda: at_least(3, finished_runs(uri)), 300, what="3 finished trials")
    # Tune has written its experiment state after those trials: a resume knows them finished
    wait_for_saved_state(crash_dir / "out" / "ray", [run.data.tags["ray_trial_id"] for run in finished])
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    killed_at = time.time() * 1000
    assert len(finished_runs(uri)) < 6
    # resumed, then stopped gracefully (SIGTERM, as Ctrl-C): runs end KILLED and the driver says how to resume
    log_before = (crash_dir / "driver.log").stat().st_size
    stopped = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, "--resume", *grid, env=env)
    wait_until(lambda: re.search(r" [1-9]\d* running", (crash_dir / "driver.log").read_bytes()[log_before:].decode(
        errors="replace")), 300, what="a trial of the resumed sweep running")
    os.kill(stopped.pid, signal.SIGTERM)
    assert stopped.wait(timeout=120) == 130
    log = (crash_dir / "driver.log").read_text()
    assert "interrupted:" in log and "--resume" in log.split("resume with:")[-1].splitlines()[1]
    client = MlflowClient(uri)
    trial_runs = fetch_trial_runs(uri, "tsdae_deletion", None)
    assert "RUNNING" not in set(trial_runs["status"]) and "KILLED" in set(trial_runs["status"])
    assert client.get_run(latest_sweep_run_id(uri, "tsdae_deletion")).info.status == "KILLED"
    resumed = start_sweep("tsdae_deletion.py", crash_dir, "--tracking-uri", uri, "--resume", *grid, env=env)
    assert resumed.wait(timeout=600) == 0, (crash_dir / "driver.log").read_text()[-3000:]
    runs = {r.info.run_id: r for r in assert_one_complete_run_per_trial(uri, 6, steps=LONG_STEPS)}
    for run in finished:  # finished before the crash: not run again (its end time is unchanged)
        assert runs[run.info.run_id].info.end_time == run.info.end_time < killed_at
    log = (crash_dir / "driver.log").read_text()
    assert reference.wait(timeout=600) == 0, (reference_dir / "driver.log").read_text()[-3000:]
    assert table_lines(log) and table_lines(log) == table_lines((reference_dir / "driver.log").read_text())
    parent = latest_sweep_run_id(uri, "tsdae_deletion")
    assert MlflowClient(uri).get_run(parent).info.status == "FINISHED"
    assert len(fetch_trial_runs(uri, "tsdae_deletion", None)) == 6  # one sweep, no second parent's runs


def max_overlap(runs) -> int:
    events = sorted([(r.info.start_time, 1) for r in runs] + [(r.info.end_time, -1) for r in runs])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


@pytest.fixture(scope="module")
def one_gpu_cluster():
    """A head of 2 CPUs that Ray is told has one GPU, shared by the packing tests (one sweep at a time)."""
    cluster = RayCluster(head_cpus=2, head_gpus=1)
    yield cluster
    cluster.stop()


# Packed trials must overlap in time (long trials); trials one after another need not (short ones).
@pytest.mark.parametrize("gpus_per_trial, expected, trials, steps", [(0.25, 4, LONG_TRIALS, LONG_STEPS),
                                                                      (1.0, 1, SHORT_TRIALS, EXPECTED_STEPS)])
def test_fractional_gpus_pack_trials_onto_one_gpu(one_gpu_cluster, tmp_path, gpus_per_trial, expected, trials,
                                                  steps):
    cluster = one_gpu_cluster
    uri = sqlite_store(tmp_path)
    # One seed: the quick grid's 4 trials, all startable at once on 2 CPUs (0.25 each), so the GPU alone limits them.
    driver = start_sweep("tsdae_deletion.py", tmp_path, "--tracking-uri", uri, "--gpus-per-trial",
                         str(gpus_per_trial), "--cpus-per-trial", "0.25", "--seeds", "1", *trials,
                         env={"RAY_ADDRESS": cluster.address})
    assert driver.wait(timeout=600) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    runs = assert_one_complete_run_per_trial(uri, expected_trials=4, steps=steps)
    assert max_overlap(runs) == expected


def test_mlflow_server_lost_mid_sweep_loses_no_result(tmp_path, shared_ray):
    server = MlflowServer(tmp_path)
    try:  # the driver is not what fails here: it runs on the session's Ray
        # short trials: the server goes down once the first trial's run exists, and the other trials' results (the
        # quick grid's 8 trials, 4 evaluations each, 2 at a time) queue until it is back
        driver = start_sweep("tsdae_deletion.py", tmp_path, "--tracking-uri", server.uri, *SHORT_TRIALS,
                             env={"RAY_ADDRESS": shared_ray})
        wait_until(lambda: len(trial_runs(server.uri)) >= 1, 240, what="the first trial run")
        server.kill()
        # trials go on; their results queue on the driver (and in its pending file) until the server is back
        wait_until(lambda: list((tmp_path / "out").glob("mlflow-pending-*.jsonl")), 240,
                   what="results queued on the driver")
        server.start()
        assert driver.wait(timeout=600) == 0, (tmp_path / "driver.log").read_text()[-3000:]
        assert_one_complete_run_per_trial(server.uri)
        assert not list((tmp_path / "out").glob("mlflow-pending-*.jsonl"))
    finally:
        server.kill()


def test_unreachable_server_at_start_fails_before_any_trial(tmp_path):
    driver = start_sweep("tsdae_deletion.py", tmp_path, "--tracking-uri", "http://127.0.0.1:9")
    assert driver.wait(timeout=120) == 2
    assert "MLflow tracking server http://127.0.0.1:9 is unreachable" in (tmp_path / "driver.log").read_text()
    assert not (tmp_path / "out").exists()
