"""The tracking store before a sweep's first write: a new SQLite store created once however many sweeps start
together, a store MLflow cannot open refused, and credentials in a tracking URI never shown."""

from __future__ import annotations

import http.server
import multiprocessing
import sys
import threading

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep.errors import InputError
from sentsweep.sweep.execution.sweep_endings import resume_command
from sentsweep.tracking.callback import _experiment_id
from sentsweep.tracking.sqlite_store import prepare_sqlite_store
from sentsweep.tracking.store import check_tracking_reachable, redact, resolve_tracking_uri
from tests.helpers.cluster_helpers import start_sweep
from tests.sweep.test_sweep_end_to_end import load_sweep


def _start_together(barrier, uri: str, results) -> None:
    """One sweep's start on the store: its creation, then its experiment's (the same name in every process)."""
    barrier.wait()
    try:
        prepare_sqlite_store(uri)
        results.put(_experiment_id(MlflowClient(uri), "together"))
    except Exception as error:  # noqa: BLE001 - reported to the test
        results.put(f"{type(error).__name__}: {error}")


def test_three_starts_at_once_on_a_new_sqlite_store_create_it_and_its_experiment_once(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(3), context.Queue()
    processes = [context.Process(target=_start_together, args=(barrier, uri, results)) for _ in range(3)]
    for process in processes:
        process.start()
    ids = [results.get(timeout=300) for _ in processes]
    for process in processes:
        process.join()
    assert len(set(ids)) == 1 and ids[0].isdigit(), ids
    experiments = MlflowClient(uri).search_experiments()
    assert sorted(experiment.name for experiment in experiments) == ["Default", "together"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mlflow.db", "mlflow.db.lock"]  # no temporary left


@pytest.mark.slow  # three sweeps (on the session's Ray, to spare the machine three Rays)
def test_three_sweeps_started_at_once_on_a_new_sqlite_store_all_finish(tmp_path, shared_ray):
    store = tmp_path / "store"
    store.mkdir()
    uri = f"sqlite:///{store / 'mlflow.db'}"  # no file yet: the first of them creates it
    drivers = []
    for number in range(3):
        workdir = tmp_path / f"sweep-{number}"
        workdir.mkdir()
        drivers.append(start_sweep("tsdae_deletion.py", workdir, "--tracking-uri", uri, "--ratios", "0.6",
                                   "--poolings", "cls", "--seeds", "1", "--max-steps", "2", "--eval-steps", "1",
                                   env={"RAY_ADDRESS": shared_ray}))
    codes = [driver.wait(timeout=900) for driver in drivers]
    logs = [(tmp_path / f"sweep-{number}" / "driver.log").read_text() for number in range(3)]
    assert codes == [0, 0, 0], "\n\n".join(log[-3000:] for log in logs)
    client = MlflowClient(uri)
    [experiment] = [found for found in client.search_experiments() if found.name == "tsdae_deletion"]
    runs = client.search_runs([experiment.experiment_id])
    sweeps = [run for run in runs if run.data.tags.get("role") == "sweep"]
    assert len(sweeps) == 3 and {run.info.status for run in sweeps} == {"FINISHED"}
    for sweep in sweeps:
        trials = [run for run in runs if run.data.tags.get("sweep_run_id") == sweep.info.run_id]
        assert [run.info.status for run in trials] == ["FINISHED"]


@pytest.mark.slow  # a sweep against the session's MLflow server
def test_a_password_in_the_tracking_uri_is_nowhere_in_the_output_or_the_runs(mlflow_server, tmp_path, monkeypatch,
                                                                             capsys):
    """A plain `mlflow server` ignores credentials: the sweep runs, and neither what it prints nor any tag, param or
    description of its runs holds the password."""
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):  # restored after the test
        monkeypatch.setenv(name, "")
    monkeypatch.chdir(tmp_path)
    module = load_sweep()
    address = mlflow_server.uri.removeprefix("http://")
    code = module.run_sweep(module.DEFINITION, [
        "--quick", "--tracking-uri", f"http://alice:s3cret-pw@{address}", "--output-dir", str(tmp_path / "out"),
        "--experiment", "credentials", "--ratios", "0.6", "--poolings", "cls", "--seeds", "1", "--max-steps", "2",
        "--eval-steps", "1"])
    ray.shutdown()
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "s3cret-pw" not in printed.out + printed.err
    client = MlflowClient(mlflow_server.uri)
    runs = client.search_runs([client.get_experiment_by_name("credentials").experiment_id])
    # the sweep's, its configuration's and its trial's
    assert sorted(run.data.tags.get("role", "trial") for run in runs) == ["configuration", "sweep", "trial"]
    for run in runs:
        assert "s3cret-pw" not in repr(run.data.tags) + repr(run.data.params)


def test_a_store_mlflow_cannot_open_is_refused_and_left_as_it_was(tmp_path):
    store = tmp_path / "mlflow.db"
    content = b"not a database, " * 512
    store.write_bytes(content)
    for check in (check_tracking_reachable, prepare_sqlite_store):
        with pytest.raises(InputError, match=f"MLflow cannot open the SQLite store sqlite:///{store}: file is not "
                                             "a database"):
            check(f"sqlite:///{store}")
    assert store.read_bytes() == content


def test_a_creation_killed_half_way_left_no_store_and_the_next_one_completes(tmp_path):
    half_built = tmp_path / ".mlflow.db.creating-999999"
    half_built.write_bytes(b"SQLite format 3\x00 and then nothing")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    prepare_sqlite_store(uri)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mlflow.db", "mlflow.db.lock"]
    assert [experiment.name for experiment in MlflowClient(uri).search_experiments()] == ["Default"]


def test_a_sqlite_store_in_a_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="folder .*file does not exist"):
        check_tracking_reachable(f"sqlite:///{tmp_path / 'file' / 'mlflow.db'}")


def test_credentials_are_redacted_wherever_a_uri_is_written():
    assert redact("--tracking-uri http://alice:s3cret@127.0.0.1:5000 --quick") == \
        "--tracking-uri http://alice:***@127.0.0.1:5000 --quick"
    assert redact("postgresql://mlflow:pw@db.lab/mlflow") == "postgresql://mlflow:***@db.lab/mlflow"
    assert redact("http://alice:s3/cret@host/mlflow") == "http://alice:***@host/mlflow"  # an unencoded / too
    assert redact("http://host/path@x and http://bob@host") == "http://host/path@x and http://bob@host"


def test_an_http_uris_credentials_go_to_mlflow_and_leave_the_uri(monkeypatch):
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_URI"):
        monkeypatch.delenv(name, raising=False)
    assert resolve_tracking_uri("https://alice:p%40ss@mlflow.lab:443/prefix") == "https://mlflow.lab:443/prefix"
    import os

    assert (os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"]) == ("alice", "p@ss")
    # a password as sentsweep prints it (a --resume line) leaves the one in the environment
    assert resolve_tracking_uri("https://alice:***@mlflow.lab") == "https://mlflow.lab"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == "p@ss"


def test_the_printed_resume_line_hides_the_password(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["sweeps/nm_weight.py", "--quick", "--tracking-uri",
                                      "http://alice:s3cret@127.0.0.1:5000"])
    line = resume_command(extend=False)
    assert "s3cret" not in line and line.endswith("--tracking-uri http://alice:***@127.0.0.1:5000 --resume")


class _AuthenticatingServer(http.server.BaseHTTPRequestHandler):
    """MLflow's basic-auth app as a client meets it: /health open, the API answering 401 to any credentials."""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200 if self.path == "/health" else 401)
        self.end_headers()
        self.wfile.write(b"OK" if self.path == "/health" else b"Unauthorized")

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture()
def authenticating_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthenticatingServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def test_wrong_credentials_are_named_as_such_without_the_password(authenticating_server, monkeypatch):
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    uri = resolve_tracking_uri(f"http://alice:s3cret@{authenticating_server}")
    with pytest.raises(InputError) as refused:
        check_tracking_reachable(uri)
    assert str(refused.value) == (f"MLflow tracking server http://{authenticating_server} refused the credentials "
                                  "of user 'alice' (HTTP 401 Unauthorized); check the user name and password")
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME")
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD")
    with pytest.raises(InputError, match="asks for credentials \\(HTTP 401 Unauthorized\\); give them in the URI"):
        check_tracking_reachable(resolve_tracking_uri(f"http://{authenticating_server}"))
