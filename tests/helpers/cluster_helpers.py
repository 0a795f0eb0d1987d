"""Real components for the distributed tests: Ray nodes started with `ray start`, an MLflow server on loopback."""

from __future__ import annotations

import atexit
import functools
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from sentsweep.sweep.compute.local_ray import NO_PRESTARTED_WORKERS
from tests.helpers.forked_python import ForkedProcess, run_python, start_python

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@functools.cache
def ray_token_auth_env() -> dict[str, str]:
    """Ray's token authentication on, as on a real cluster: a token made once per test session (a file of mode 600,
    removed at exit) that every Ray node, driver and in-process client of the session reads. tests/conftest.py puts
    it in the test process's environment before Ray is imported (Ray reads the mode once, at import)."""
    folder = Path(tempfile.mkdtemp(prefix="ray-auth-"))
    atexit.register(shutil.rmtree, folder, True)
    token = folder / "auth_token"
    token.touch(mode=0o600)
    token.write_text(secrets.token_hex(32))
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}


RAY_ENV = os.environ | {"RAY_USAGE_STATS_ENABLED": "0"} | ray_token_auth_env()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, timeout_s: float, interval_s: float = 0.5, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


def at_least(count: int, items: list):
    """`items` when there are `count` or more, else None (a `wait_until` condition that returns what it waited for)."""
    return items if len(items) >= count else None


# Ray's settings (read by its GCS from the environment, RAY_<name>) of a cluster whose test kills a node: the GCS
# counts a node dead after 3 failed health checks 1 s apart instead of Ray's 5 checks 3 s apart (about 7 s after a
# `kill -9` on this machine instead of 17 s). A check still waits Ray's 10 s for an answer, so a live node's raylet
# slowed by a loaded machine is not taken for dead.
QUICK_NODE_DEATH = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3"}


class RayCluster:
    """A head node and worker nodes on this machine, each its own `ray start --block` process group; `env`: Ray's
    settings its nodes start with (e.g. QUICK_NODE_DEATH)."""

    def __init__(self, head_cpus: float, head_gpus: int = 0, log_monitor: bool = True, env: dict | None = None,
                 ) -> None:
        self.env = env or {}
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[subprocess.Popen] = []
        # Its own temporary folder, where `ray start --head` also writes its address for `ray.init()` to find
        # (by default /tmp/ray/ray_current_cluster): a sweep that should start its own local Ray, in a test running
        # at the same time, must not find and join this cluster.
        self.temp_dir = tempfile.mkdtemp(prefix="rt")  # short: Ray's socket paths live under it
        self._start(["--head", f"--port={self.port}", "--node-ip-address=127.0.0.1", f"--num-cpus={head_cpus}",
                     f"--num-gpus={head_gpus}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}",
                     f"--include-log-monitor={str(log_monitor).lower()}"])
        self._gcs = None
        wait_until(self._ready, 60, interval_s=0.2, what="the Ray head")

    def _ready(self) -> bool:
        """The head's GCS answers and counts the head node alive (what a driver's `ray.init` and `ray.nodes()` need)."""
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False  # the GCS does not listen yet (a GCS client would block until it does)
        return bool(self.alive_nodes())

    def alive_nodes(self) -> set:
        """The ids of the nodes the cluster's GCS counts alive now (asked in-process, not by starting `ray status`)."""
        if self._gcs is None:
            from ray._raylet import GcsClient

            self._gcs = GcsClient(address=self.address)
        return {node_id for node_id, node in self._gcs.get_all_node_info(timeout=10).items() if node.state == 0}

    def _start(self, arguments: list[str], hidden: tuple[Path, ...] = ()) -> subprocess.Popen:
        command = [str(BIN / "ray"), "start", "--block", "--disable-usage-stats", *arguments]
        if hidden:  # in a mount namespace of its own, each hidden folder covered by an empty one
            empty = tempfile.mkdtemp(prefix="hidden-")
            mounts = "".join(f"mount --bind {shlex.quote(empty)} {shlex.quote(str(path))} && " for path in hidden)
            command = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                       f"{mounts}exec {shlex.join(command)}"]
        # no default workers prestarted for the first driver, as on the local Ray a sweep starts for its forked workers
        # (sentsweep.sweep.compute.local_ray): the tests' sweeps fork theirs, and Ray starts a default worker when one
        # is asked
        node = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                env=RAY_ENV | dict([NO_PRESTARTED_WORKERS]) | self.env,
                                cwd=hidden[0].parent if hidden else None)
        self.nodes.append(node)
        return node

    def add_worker(self, cpus: float, hidden: tuple[Path, ...] = ()) -> subprocess.Popen:
        """Start a worker node and return once the head counts it alive (its resources are the cluster's). The
        folders `hidden` are empty for it (a mount namespace of its own; root only), as on a machine whose disk
        lacks them."""
        known = self.alive_nodes()
        node = self._start([f"--address={self.address}", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}"],
                           hidden)
        wait_until(lambda: self.alive_nodes() - known, 60, interval_s=0.2, what="the worker node to join")
        return node

    @staticmethod
    def kill(node: subprocess.Popen) -> None:
        os.killpg(node.pid, signal.SIGKILL)
        node.wait()

    def stop(self) -> None:
        """Kill this cluster's nodes, each `ray start --block` with the Ray processes it started (its process
        group). Not `ray stop`, which stops every Ray on the machine, other users' and other tests' included."""
        for node in reversed(self.nodes):
            if node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
        self._gcs = None
        shutil.rmtree(self.temp_dir, ignore_errors=True)


class MlflowServer:
    """`mlflow server` on 127.0.0.1 with a SQLite store (or `backend_store`, e.g. a PostgreSQL database's URI); can
    be killed and started again on the same port, also from another process (`fault_commands`: the fault matrix's
    drivers stop and start it at their fault points). Its settings and process id live in `folder`."""

    def __init__(self, folder: Path, backend_store: str | None = None, start: bool = True) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        settings = folder / "server.json"
        if settings.exists():  # attached to a server another process made (see attach)
            self.backend_store, self.port = json.loads(settings.read_text())
        else:
            self.backend_store = backend_store or f"sqlite:///{folder / 'server.db'}"
            self.port = free_port()
            settings.write_text(json.dumps([self.backend_store, self.port]))
        self.uri = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        if start:
            self.start()

    @classmethod
    def attach(cls, folder: Path) -> MlflowServer:
        """The server made in `folder`, started or not, as another process sees it."""
        return cls(folder, start=False)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "mlflow"), "server", "--backend-store-uri", self.backend_store,
             "--artifacts-destination", str(self.folder / "artifacts"), "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            # without the job runner (huey consumers, for GenAI jobs) it would start beside the server: processes that
            # import MLflow, each start and restart, for jobs no test runs
            env=os.environ | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
        )
        (self.folder / "server.pid").write_text(str(self.process.pid))
        # as long as it takes on a loaded machine while the server lives (the limit only ends a hung start)
        wait_until(lambda: self.healthy() or self.process.poll() is not None, 1800, what="the MLflow server")
        if self.process.poll() is not None:
            raise RuntimeError(f"mlflow server on port {self.port} exited with code {self.process.returncode}")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.uri + "/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        except OSError:
            return False
        return True

    def kill(self) -> None:
        """Kill the server (its process group), whichever process started it, and return once its port is closed."""
        pid_file = self.folder / "server.pid"
        pid = int(pid_file.read_text()) if pid_file.exists() else None
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process is not None:
            if self.process.pid == pid:
                self.process.wait()
            else:
                self.process.poll()  # reaped, if another process's stop killed it
        wait_until(lambda: not self.listening(), 120, interval_s=0.2, what="the MLflow server's port to close")

    def fault_commands(self) -> dict[str, str]:
        """The environment of a driver that stops and starts this server at its fault points (`sentsweep.faults`)."""
        from sentsweep.faults import MLFLOW_START_ENV, MLFLOW_STOP_ENV

        control = shlex.join([sys.executable, str(Path(__file__).with_name("mlflow_server_control.py"))])
        return {MLFLOW_STOP_ENV: f"{control} stop {shlex.quote(str(self.folder))}",
                MLFLOW_START_ENV: f"{control} start {shlex.quote(str(self.folder))}"}


def postgres_bin_dir() -> Path | None:
    """The folder of PostgreSQL's server programs (initdb, pg_ctl), the newest Debian installs; None without one."""
    folders = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda path: int(path.parent.name))
    found = [folder for folder in folders if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file()]
    return found[-1] if found else None


class PostgresServer:
    """A PostgreSQL server of its own (initdb in a temporary folder) on 127.0.0.1, with a database `mlflow` owned by
    a user `mlflow` who logs in with a password. As root its programs run as the `postgres` user (PostgreSQL
    refuses to run as root)."""

    USER = DATABASE = "mlflow"

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.port = free_port()
        self.password = "pw-" + os.urandom(8).hex()
        self.folder = Path(tempfile.mkdtemp(prefix="sentsweep-pg-"))  # not under pytest's tmp_path: the postgres
        self.data = self.folder / "data"  # user must reach it
        self.uri = f"postgresql://{self.USER}:{self.password}@127.0.0.1:{self.port}/{self.DATABASE}"
        (self.folder / "password").write_text(self.password + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            shutil.chown(self.folder / "password", "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", self.USER, f"--pwfile={self.folder / 'password'}",
                  "--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w", "-t", "120", "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off", "start")
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.USER, self.DATABASE,
                  env={"PGPASSWORD": self.password})

    def _run(self, program: str, *arguments: str, env: dict | None = None) -> None:
        command = [str(self.bin_dir / program), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, cwd=self.folder, timeout=180,
                                env=os.environ | (env or {}))
        if result.returncode != 0:
            raise RuntimeError(f"{program} failed ({result.returncode}): {result.stdout}{result.stderr}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


@functools.cache
def _empty_store() -> Path:
    """An empty MLflow SQLite store, made once per test session as a new store's first client would make it."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    template = Path(tempfile.mkdtemp(prefix="mlflow-store-")) / "mlflow.db"
    SqlAlchemyStore(f"sqlite:///{template}", str(template.parent / "mlruns")).engine.dispose()
    atexit.register(shutil.rmtree, template.parent, True)
    return template


def sqlite_store(folder: Path) -> str:
    """The URI of a new MLflow SQLite store, folder/mlflow.db: a copy of `_empty_store` (MLflow's schema migrations
    take seconds on a small machine, in the driver that opens the store first)."""
    shutil.copyfile(_empty_store(), folder / "mlflow.db")
    return f"sqlite:///{folder / 'mlflow.db'}"


def folder_store(folder: Path) -> str:
    """The URI of folder/mlflow.db, made by `sqlite_store` where it does not exist yet: the store a test's sweeps in
    `folder` share."""
    store = folder / "mlflow.db"
    return f"sqlite:///{store}" if store.exists() else sqlite_store(folder)


def start_sweep(script: str, workdir: Path, *arguments: str, env: dict | None = None,
                ) -> ForkedProcess | subprocess.Popen:
    """A sweep script's --quick run as its own process (the driver: `start_driver`), its output in workdir/out."""
    return start_driver([sys.executable, str(PROJECT / "sweeps" / script), "--quick", "--output-dir",
                         str(workdir / "out"), *arguments], workdir, env)


def start_driver(command: list[str], workdir: Path, env: dict | None = None) -> ForkedProcess | subprocess.Popen:
    """`command` (a sweep's `python FILE.py ...`, forked: tests.helpers.forked_python) as its own process in `workdir`,
    in a
    session of its own, with `driver_environment(env)`, its output and errors appended to workdir/driver.log."""
    with open(workdir / "driver.log", "ab") as log:
        return start_python(command, workdir, driver_environment(env), log, subprocess.STDOUT)


def run_driver(command: list[str], cwd: Path, env: dict | None = None, timeout: float = 600,
               ) -> subprocess.CompletedProcess:
    """`command` (a sweep's or a researcher's `python FILE.py ...`, forked: tests.helpers.forked_python) run to its end
    in
    `cwd` with `driver_environment(env)`, its output and errors captured."""
    return run_python(command, cwd, driver_environment(env), timeout)


def driver_environment(env: dict | None) -> dict[str, str]:
    """A driver's environment: the session's Ray settings (RAY_ENV), unbuffered output, then `env`."""
    return RAY_ENV | {"PYTHONUNBUFFERED": "1"} | (env or {})


def saved_trial_statuses(storage: Path) -> dict[str, str]:
    """{trial id: status} as the experiment states Ray Tune last saved under `storage` (a sweep's Ray Tune storage,
    OUTPUT_DIR/ray) hold them: per experiment folder its newest experiment_state file, the one --resume restores."""
    statuses = {}
    for folder in storage.iterdir() if storage.is_dir() else []:
        states = sorted(folder.glob("experiment_state-*.json"))
        if not states:
            continue
        try:
            trials = json.loads(states[-1].read_text())["trial_data"]
        except (OSError, ValueError, KeyError):
            continue  # being written or copied: read again at the next poll
        for trial_state, _ in trials:
            trial = json.loads(trial_state)
            statuses[trial["trial_id"]] = trial["status"]
    return statuses


def wait_for_saved_state(storage: Path, trial_ids, timeout_s: float = 120) -> None:
    """Wait until Ray Tune's saved experiment state under `storage` has each of `trial_ids` terminated, so that a
    driver killed from now on is resumed with those trials done."""
    trial_ids = set(trial_ids)
    wait_until(lambda: all(saved_trial_statuses(storage).get(trial) == "TERMINATED" for trial in trial_ids),
               timeout_s, interval_s=0.2, what=f"Ray Tune's saved experiment state to hold trials {sorted(trial_ids)}")
