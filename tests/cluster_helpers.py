"""Real components for the distributed tests: Ray nodes started with `ray start`, an MLflow server on loopback."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Test clusters live on this machine only; Ray's token authentication is for clusters reachable by others.
RAY_ENV = os.environ | {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


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


class RayCluster:
    """A head node and worker nodes on this machine, each its own `ray start --block` process group."""

    def __init__(self, head_cpus: float, head_gpus: int = 0) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[subprocess.Popen] = []
        # Its own temporary folder, where `ray start --head` also writes its address for `ray.init()` to find
        # (by default /tmp/ray/ray_current_cluster): a sweep that should start its own local Ray, in a test running
        # at the same time, must not find and join this cluster.
        self.temp_dir = tempfile.mkdtemp(prefix="rt")  # short: Ray's socket paths live under it
        self._start(["--head", f"--port={self.port}", "--node-ip-address=127.0.0.1", f"--num-cpus={head_cpus}",
                     f"--num-gpus={head_gpus}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}"])
        wait_until(self._ready, 60, what="the Ray head")

    def _ready(self) -> bool:
        result = subprocess.run([str(BIN / "ray"), "status", f"--address={self.address}"], capture_output=True,
                                env=RAY_ENV, text=True)
        return result.returncode == 0 and "Node status" in result.stdout

    def _start(self, arguments: list[str]) -> subprocess.Popen:
        node = subprocess.Popen([str(BIN / "ray"), "start", "--block", "--disable-usage-stats", *arguments],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                env=RAY_ENV)
        self.nodes.append(node)
        return node

    def add_worker(self, cpus: float) -> subprocess.Popen:
        node = self._start([f"--address={self.address}", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}"])
        time.sleep(5)
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
        shutil.rmtree(self.temp_dir, ignore_errors=True)


class MlflowServer:
    """`mlflow server` on 127.0.0.1 with a SQLite store; can be killed and started again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "mlflow"), "server", "--backend-store-uri", f"sqlite:///{self.folder / 'server.db'}",
             "--artifacts-destination", str(self.folder / "artifacts"), "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_until(self.healthy, 120, what="the MLflow server")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.uri + "/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def start_sweep(script: str, workdir: Path, *arguments: str, env: dict | None = None) -> subprocess.Popen:
    """A sweep script as its own process (the driver), output to workdir/driver.log."""
    log = open(workdir / "driver.log", "ab")
    return subprocess.Popen(
        [sys.executable, str(PROJECT / "sweeps" / script), "--quick", "--output-dir", str(workdir / "out"),
         *arguments],
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=RAY_ENV | {"PYTHONUNBUFFERED": "1"} | (env or {}),
    )
