"""`sentsweep ui`: MLflow's UI over a sweep store, light and on the pages a sweep's runs are read on.

It serves the store with `mlflow server` (what `mlflow ui` runs) as a sweep needs it: one worker (MLflow's default
is four, each a process holding the whole app), MLflow's GenAI job runner off (`MLFLOW_SERVER_ENABLE_JOB_EXECUTION`:
it is for LLM judges and evaluations), bound to 127.0.0.1. It prints the link of the newest sweep's answer (its
saved view: `sentsweep.tracking.views`, in the model-training layout, `workflowType=machine_learning`) once the
server answers, and on Ctrl-C ends the server's processes (its process group) and returns 0, with no traceback.
The server's own log goes to a temporary file; its last lines are printed where the server fails.

MLflow 3.17 has no server option to close its Assistant: its panel opens by itself once per browser profile (the
local-storage flag `mlflow.assistant.fab.autoOpenedOnFirstLoad`) on a page served from localhost or 127.0.0.1;
closed with its button, it stays closed.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.terminal import HelpFormatter
from sentsweep.tracking.store import check_tracking_reachable, experiment_page, redact, resolve_tracking_uri
from sentsweep.tracking.views import ANSWER_VIEW_TAG

HOST = "127.0.0.1"
SERVER_ENVIRONMENT = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no GenAI job runner beside the server
START_TIMEOUT_S = 300.0  # a bound on a server that never answers, not a speed assumption
STOP_TIMEOUT_S = 20.0
DESCRIPTION = ("MLflow's UI over a sweep store: one worker, on 127.0.0.1, its GenAI job runner off; prints the newest "
               "sweep's link (its answer, in the model-training layout); Ctrl-C stops it and its processes")


def server_command(uri: str, port: int) -> list[str]:
    """The `mlflow server` command line that serves store `uri` on 127.0.0.1:`port` with one worker."""
    return [str(Path(sys.executable).with_name("mlflow")), "server", "--backend-store-uri", uri, "--host", HOST,
            "--port", str(port), "--workers", "1"]


def check_store(uri: str) -> None:
    """Refuse (`InputError`) a store that is not a database file holding MLflow's tables: an HTTP URI (a server
    already: open its own UI) or a SQLite file that does not exist (`mlflow server` would create an empty one)."""
    if uri.startswith(("http://", "https://")):
        raise InputError(f"--tracking-uri {redact(uri)} is a tracking server: open its UI there "
                         "(sentsweep ui serves a database store, such as sqlite:///mlflow.db)")
    if uri.startswith("sqlite:///"):
        path = Path(uri[len("sqlite:///"):])
        if not path.is_file():
            raise InputError(f"--tracking-uri {uri}: no MLflow store at {path} (run a sweep first, or name its "
                             "store)")
    check_tracking_reachable(uri)


def check_port(port: int) -> None:
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError as error:
            raise InputError(f"--port {port}: {HOST}:{port} is in use ({error.strerror}); choose another "
                             "with --port") from None


def newest_sweep_link(uri: str, base: str) -> str | None:
    """The link of the newest sweep's answer on the UI at `base` (its sweep run's saved view; None: no sweep)."""
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    client = MlflowClient(uri)
    experiments = [experiment.experiment_id for experiment in client.search_experiments()]
    runs = client.search_runs(experiments, "tags.role = 'sweep'", order_by=["attributes.start_time DESC"],
                              max_results=1) if experiments else []
    if not runs:
        return None
    run = runs[0]
    view = run.data.tags.get(ANSWER_VIEW_TAG, run.info.run_id)
    return f"{run.info.run_name}: {experiment_page(base, run.info.experiment_id, view)}"


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def log_tail(path: Path, lines: int = 15) -> str:
    return "its log ends:\n" + "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def stop(process: subprocess.Popen) -> None:
    """End the server's process group: SIGTERM, then SIGKILL where it has not ended within STOP_TIMEOUT_S."""
    for signal_number, wait_s in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, STOP_TIMEOUT_S)):
        try:
            os.killpg(process.pid, signal_number)
        except ProcessLookupError:
            break
        try:
            process.wait(wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # the workers it started, should any outlive it
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _interrupt(signal_number, frame) -> None:
    raise KeyboardInterrupt


def serve(uri: str, port: int, log_path: Path) -> int:
    """Serve `uri` until Ctrl-C (0) or until the server ends by itself (1, its log's last lines printed)."""
    base = f"http://{HOST}:{port}"
    # Ctrl-C (and a plain `kill`) end it cleanly also where SIGINT came ignored (a job started in the background)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(server_command(uri, port), stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True,  # Ctrl-C reaches us alone
                                   env=os.environ | SERVER_ENVIRONMENT)
    try:
        print(f"starting MLflow's UI on {base} (one worker); Ctrl-C stops it", flush=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not answers(f"{base}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                ended = "ended" if process.poll() is not None else f"did not answer within {START_TIMEOUT_S:g} s"
                print(f"error: MLflow's server {ended}; {log_tail(log_path)}", file=sys.stderr)
                return 1
            time.sleep(0.5)
        link = newest_sweep_link(uri, base)
        print(f"MLflow: {link}" if link else f"MLflow: {experiment_page(base, '0')} (no sweep in this store yet)",
              flush=True)
        process.wait()
        print(f"error: MLflow's server ended by itself (exit {process.returncode}); {log_tail(log_path)}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopping MLflow's UI", flush=True)
        return 0
    finally:
        stop(process)


def main(argv: list[str] | None = None, prog: str = "sentsweep ui") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--tracking-uri", help="the store to serve (default: MLFLOW_TRACKING_URI, else "
                                               "./mlflow.db, as the sweeps)")
    parser.add_argument("--port", type=int, default=5000, help="the port on 127.0.0.1 (default: 5000)")
    args = parser.parse_args(argv)
    uri = resolve_tracking_uri(args.tracking_uri)
    try:
        if not 0 < args.port < 65536:
            raise InputError(f"--port {args.port}: a port is 1 to 65535")
        check_store(uri)
        check_port(args.port)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sentsweep-ui-") as folder:
        return serve(uri, args.port, Path(folder) / "mlflow-server.log")
