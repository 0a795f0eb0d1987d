"""A team's MLflow: a server whose backend store is PostgreSQL (postgresql://...), as the cluster configs start it
when SENTSWEEP_MLFLOW_BACKEND_STORE is set; SQLite stays their default.

The sweep runs against a real PostgreSQL server of its own on 127.0.0.1 (Debian's `postgresql` package:
apt-get install postgresql) through the `postgres` extra's driver; without either the test is skipped.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess

import pytest
import ray
import yaml
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from tests.helpers.cluster_helpers import PROJECT, MlflowServer, PostgresServer, postgres_bin_dir
from tests.sweep.test_sweep_end_to_end import load_sweep


def backend_store_argument(path: str) -> str:
    """The head's `mlflow server` command in the cluster config `path`: its --backend-store-uri word, as written."""
    config = yaml.safe_load((PROJECT / path).read_text())
    (command,) = [command for command in config["head_start_ray_commands"] if "mlflow server" in command]
    return re.search(r"--backend-store-uri (\S+)", command)[1]


@pytest.mark.parametrize("path, sqlite", [("cluster.yaml", "sqlite:////home/u/mlflow.db"),
                                          ("cluster-onprem.yaml", "sqlite:////home/u/sentsweep-mlflow/mlflow.db")])
def test_the_cluster_configs_start_mlflow_on_the_team_postgres_when_named_and_on_sqlite_otherwise(path, sqlite):
    def expanded(env: dict) -> str:  # as the head's shell expands the command's word
        shell_env = {"PATH": os.environ["PATH"], "HOME": "/home/u"} | env
        return subprocess.run(["bash", "-c", f"printf %s {backend_store_argument(path)}"], env=shell_env,
                              capture_output=True, text=True, check=True).stdout

    team = "postgresql://mlflow@db.example.org:5432/mlflow"
    assert expanded({"SENTSWEEP_MLFLOW_BACKEND_STORE": team}) == team
    assert expanded({}) == sqlite


@pytest.fixture(scope="module")
def postgres():
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server programs (/usr/lib/postgresql/*/bin): apt-get install postgresql")
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("no PostgreSQL driver for MLflow: pip install -c constraints.txt -e '.[postgres]'")
    server = PostgresServer(bin_dir)
    yield server
    server.stop()


@pytest.mark.slow  # a PostgreSQL server, an MLflow server, Ray and a sweep
def test_a_quick_sweep_logs_every_trial_finished_to_a_postgres_backed_mlflow_server(postgres, tmp_path, shared_ray):
    server = MlflowServer(tmp_path / "mlflow", backend_store=postgres.uri)
    try:
        module = load_sweep(PROJECT / "sweeps" / "tsdae_deletion.py")
        output = io.StringIO()
        try:
            with contextlib.redirect_stdout(output):
                code = module.run_sweep(module.DEFINITION, [
                    "--quick", "--ratios", "0.6", "--poolings", "cls", "mean", "--seeds", "1", "--max-steps", "20",
                    "--eval-steps", "10", "--tracking-uri", server.uri, "--output-dir", str(tmp_path / "out")])
        finally:
            ray.shutdown()
        assert code == 0, output.getvalue()[-3000:]
        runs = fetch_trial_runs(server.uri, "tsdae_deletion", latest_sweep_run_id(server.uri, "tsdae_deletion"))
        assert len(runs) == 2
        client = MlflowClient(server.uri)
        statuses = {client.get_run(run_id).info.status for run_id in runs["run_id"]}
        assert statuses == {"FINISHED"}
    finally:
        server.kill()
    # the runs are in PostgreSQL: a server started afresh on the same database lists them
    again = MlflowServer(tmp_path / "mlflow-again", backend_store=postgres.uri)
    try:
        assert len(fetch_trial_runs(again.uri, "tsdae_deletion", latest_sweep_run_id(again.uri, "tsdae_deletion"))) == 2
    finally:
        again.kill()
