"""Ray workers forked from a fork server (sentsweep.worker_fork): the launcher stands for the worker it asks for
(its streams, environment, folder, arguments, exit status and signals), a worker ends with its launcher, a server
serves one environment, a launcher with no server runs the worker itself, and Ray's trials run in forked workers
with the threads Ray gave them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from sentsweep import worker_fork
from sentsweep.sweep.compute import ray_connection
from tests.helpers.forked_python import ForkedProcess, run_python, start_python

# A stand-in for Ray's default_worker.py: says where and how it runs, then does what its first argument says.
FAKE_WORKER = textwrap.dedent("""
    import gc, json, os, signal, sys, time
    preloaded = "torch" in sys.modules  # before this script imported anything itself
    print(json.dumps({"pid": os.getpid(), "parent": open(f"/proc/{os.getppid()}/cmdline").read(),
                      "cwd": os.getcwd(), "argv": sys.argv, "marker": os.environ.get("FORK_TEST_MARKER"),
                      "preloaded": preloaded, "main": __name__, "script_folder_on_path": sys.path[0],
                      "frozen": gc.get_freeze_count(),
                      "blocked": sorted(map(int, signal.pthread_sigmask(signal.SIG_BLOCK, [])))}), flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    action = sys.argv[1]
    if action == "exit":
        sys.exit(int(sys.argv[2]))
    if action == "sigterm-self":
        os.kill(os.getpid(), 15)
    if action == "sleep":
        open(sys.argv[2], "w").write(str(os.getpid()))
        time.sleep(600)
    if action == "exit-message":
        sys.exit("stopped: a message")
    if action == "interrupt":
        raise KeyboardInterrupt
    if action == "thread-then-atexit":
        import atexit, threading
        atexit.register(print, "atexit ran", flush=True)
        threading.Thread(target=lambda: (time.sleep(1), print("thread done", flush=True))).start()
""")


@pytest.fixture(scope="module")
def fork_env(tmp_path_factory) -> dict[str, str]:
    """An environment whose fork servers live in a folder of this module's own (TMPDIR), stopped at its end."""
    folder = tmp_path_factory.mktemp("wf")
    yield os.environ | {"TMPDIR": str(folder), "FORK_TEST_MARKER": "seen"}
    for server_socket in folder.glob("sentsweep-worker-fork-*/*.sock"):
        subprocess.run(["pkill", "-f", "--", f"--serve {server_socket}"], check=False)


@pytest.fixture(scope="module")
def fake_worker(tmp_path_factory) -> Path:
    script = tmp_path_factory.mktemp("worker") / "default_worker.py"
    script.write_text(FAKE_WORKER)
    return script


def launch(env, fake_worker, *arguments, cwd="/", blocking=()) -> subprocess.CompletedProcess:
    """The fake worker launched through the fork server, by a launcher that blocks the signals `blocking`."""
    return subprocess.run([sys.executable, "-P", "-m", "sentsweep.worker_fork", str(fake_worker), *arguments],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, blocking))


@pytest.mark.slow  # starts a fork server (or uses this module's)
def test_a_forked_worker_blocks_the_signals_its_launcher_blocks_not_the_servers(fork_env, fake_worker, tmp_path):
    """A started interpreter inherits its parent's blocked signals; a forked one takes them from its launcher, not
    from the server (whose are those of the process that started it: a Ray worker that blocks SIGINT, say)."""
    blocked = [json.loads(launch(fork_env, fake_worker, "exit", "0", blocking=mask).stdout.splitlines()[0])["blocked"]
               for mask in ({signal.SIGINT, signal.SIGUSR2}, (), {signal.SIGUSR2})]
    assert blocked == [sorted([signal.SIGINT, signal.SIGUSR2]), [], [signal.SIGUSR2]]


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_a_forked_worker_runs_with_the_launchers_streams_folder_environment_and_arguments(fork_env, fake_worker,
                                                                                           tmp_path):
    ended = launch(fork_env, fake_worker, "exit", "7", cwd=tmp_path)
    seen = json.loads(ended.stdout.splitlines()[0])
    assert ended.returncode == 7
    assert "--serve" in seen["parent"] and seen["preloaded"]  # forked from the server, PyTorch already imported
    assert seen["frozen"] > 100_000  # the server's objects, which the worker's garbage collections leave out
    assert seen["cwd"] == str(tmp_path)
    assert seen["argv"] == [str(fake_worker), "exit", "7"] and seen["marker"] == "seen"
    assert seen["main"] == "__main__" and seen["script_folder_on_path"] == str(fake_worker.parent)
    assert ended.stderr.strip().endswith("to stderr")


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_a_worker_ended_by_a_signal_ends_its_launcher_by_that_signal(fork_env, fake_worker):
    assert launch(fork_env, fake_worker, "sigterm-self").returncode == -signal.SIGTERM


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_a_signal_to_the_launcher_reaches_its_worker_and_a_killed_launcher_ends_its_worker(fork_env, fake_worker,
                                                                                           tmp_path):
    for sent in (signal.SIGTERM, signal.SIGKILL):
        pid_file = tmp_path / f"worker-{sent}"
        launcher = subprocess.Popen([sys.executable, "-P", "-m", "sentsweep.worker_fork", str(fake_worker), "sleep",
                                     str(pid_file)], env=fork_env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        worker = int(pid_file.read_text())
        launcher.send_signal(sent)
        assert launcher.wait(timeout=30) == -sent
        assert _ends(worker), f"the worker outlived its launcher's {signal.Signals(sent).name}"


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
@pytest.mark.parametrize("action", [["exit", "7"], ["exit-message"], ["interrupt"], ["thread-then-atexit"]],
                         ids=" ".join)
def test_a_forked_script_ends_as_a_fresh_interpreter_ends_it(fork_env, fake_worker, tmp_path, action):
    """Its exit status, and what it printed last: a `sys.exit` message, an uncaught Ctrl-C (ended by SIGINT), a
    non-daemon thread joined before the `atexit` functions run. Through the launcher and through the tests' own
    forked commands (tests.helpers.forked_python)."""
    command = [sys.executable, str(fake_worker), *action]
    fresh = subprocess.run(command, env=fork_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    for forked in (launch(fork_env, fake_worker, *action, cwd=tmp_path),
                   run_python(command, tmp_path, fork_env, timeout=300)):
        assert forked.returncode == fresh.returncode, forked.stderr
        assert forked.stdout.splitlines()[1:] == fresh.stdout.splitlines()[1:]  # after the line naming its pid
        assert forked.stderr.splitlines()[-1] == fresh.stderr.splitlines()[-1]
    assert "--serve" in json.loads(forked.stdout.splitlines()[0])["parent"]  # forked, not started afresh


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_a_forked_command_leads_a_process_group_of_its_own_as_a_new_session_does(fork_env, fake_worker, tmp_path):
    pid_file = tmp_path / "pid"
    with open(tmp_path / "out", "wb") as output:
        process = start_python([sys.executable, str(fake_worker), "sleep", str(pid_file)], tmp_path, fork_env, output,
                               subprocess.STDOUT)
    assert isinstance(process, ForkedProcess)
    deadline = time.monotonic() + 300
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert int(pid_file.read_text()) == process.pid  # the script's own process, not a launcher's
    assert os.getpgid(process.pid) == os.getsid(process.pid) == process.pid
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.5)
    os.killpg(process.pid, signal.SIGKILL)  # as a test reaps a driver's group
    assert process.wait(timeout=30) == -signal.SIGKILL and process.poll() == -signal.SIGKILL


def _ends(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_a_server_serves_only_the_environment_it_was_started_with():
    base = {"PATH": "/usr/bin", "HF_HUB_OFFLINE": "1"}
    assert worker_fork.server_key(base) == worker_fork.server_key(base | {"RAY_JOB_ID": "02000000",
                                                                          "RAY_RAYLET_PID": "4242",
                                                                          "PYTEST_CURRENT_TEST": "t.py::a (call)",
                                                                          "PWD": "/elsewhere", "SHLVL": "3",
                                                                          "SENTSWEEP_FAULT": "trial:0:KILL",
                                                                          "RAY_AUTH_TOKEN_PATH": "/tmp/a/token",
                                                                          "MLFLOW_TRACKING_URI": "sqlite:///m.db",
                                                                          "_MLFLOW_TELEMETRY_SESSION_ID": "abc",
                                                                          "TUNE_MAX_PENDING_TRIALS_PG": "4",
                                                                          "MTEB_CACHE": "/tmp/mteb-cache",
                                                                          "SPT_NOENV": "1", "PL_DISABLE_FORK": "1",
                                                                          "_RJEM_MALLOC_CONF": "dirty_decay_ms:500",
                                                                          "PYTHONBREAKPOINT": "ray.util.rpdb.set_trace",
                                                                          "CRC32C_SW_MODE": "auto"})
    assert worker_fork.server_key(base) != worker_fork.server_key(base | {"HF_HUB_OFFLINE": "0"})
    assert worker_fork.server_key(base) != worker_fork.server_key(base | {"OMP_NUM_THREADS": "4"})
    assert worker_fork.server_key(base) != worker_fork.server_key(base | {"PYTHONPATH": "/tmp/plugins"})


class FakeNode:
    def __init__(self, address: str) -> None:
        self.node_manager_address = address


def test_workers_are_forked_only_on_a_ray_whose_nodes_all_run_on_this_machine(monkeypatch):
    from ray._private.services import get_node_ip_address
    from ray._raylet import GcsClient

    nodes = {}

    class FakeGcsClient:
        def __init__(self, address: str) -> None:
            assert address == "127.0.0.1:6390"

        def get_all_node_info(self, timeout, state_filter):
            return nodes

    monkeypatch.setattr(ray_connection, "cluster_address", lambda: None)
    assert ray_connection.ray_on_this_machine()  # a Ray the driver starts itself
    monkeypatch.setattr(ray_connection, "cluster_address", lambda: "127.0.0.1:6390")
    monkeypatch.setattr(sys.modules[GcsClient.__module__], "GcsClient", FakeGcsClient)
    nodes.update(head=FakeNode("127.0.0.1"), worker=FakeNode(get_node_ip_address()))
    assert ray_connection.ray_on_this_machine()
    nodes["elsewhere"] = FakeNode("10.1.2.3")
    assert not ray_connection.ray_on_this_machine()
    monkeypatch.setenv("RAY_ADDRESS", "ray://10.1.2.3:10001")
    assert not ray_connection.ray_on_this_machine()


def test_nothing_is_forked_on_a_node_with_an_nvidia_gpu(fork_env, fake_worker, tmp_path, monkeypatch):
    monkeypatch.setattr(worker_fork, "GPU_DEVICE", fake_worker)  # a path that exists, standing for /dev/nvidiactl
    env = fork_env | {"TMPDIR": str(tmp_path)}  # where a server, had one been asked for, would have its socket
    assert worker_fork.fork_python([str(fake_worker), "exit", "0"], str(tmp_path), env, [0, 1, 2]) is None
    with open(tmp_path / "out", "wb") as output:
        process = start_python([sys.executable, str(fake_worker), "exit", "5"], tmp_path, env, output,
                               subprocess.STDOUT)
    assert isinstance(process, subprocess.Popen) and process.wait(timeout=120) == 5
    assert not list(tmp_path.glob("sentsweep-worker-fork-*"))  # no server was asked for


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_a_launcher_whose_server_cannot_start_runs_the_worker_itself(fork_env, fake_worker, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sentence_transformers.py").write_text("raise ImportError('broken on purpose')\n")
    ended = launch(fork_env | {"PYTHONPATH": str(broken)}, fake_worker, "exit", "3")
    seen = json.loads(ended.stdout.splitlines()[0])
    assert ended.returncode == 3
    assert "--serve" not in seen["parent"] and not seen["preloaded"]
    logs = list(Path(fork_env["TMPDIR"]).glob("sentsweep-worker-fork-*/*.log"))
    assert any("broken on purpose" in log.read_text() for log in logs)


@pytest.mark.slow  # starts a fork server, which imports PyTorch and sentence-transformers
def test_ray_runs_a_jobs_actors_in_forked_workers_with_the_threads_it_gave_them(fork_env):
    probe = textwrap.dedent("""
        import json, os, sys
        import ray
        from sentsweep.worker_fork import worker_runtime_env

        @ray.remote(num_cpus=1)
        class Trial:
            def where(self):
                preloaded = "torch" in sys.modules
                from sentsweep.trainables.session import use_the_threads_ray_gave
                import torch
                use_the_threads_ray_gave()
                return {"parent": open(f"/proc/{os.getppid()}/cmdline").read(), "preloaded": preloaded,
                        "threads": torch.get_num_threads(), "omp": os.environ.get("OMP_NUM_THREADS")}

        ray.init(num_cpus=2, include_dashboard=False, runtime_env=worker_runtime_env(),
                 _temp_dir=sys.argv[1])
        print(json.dumps(ray.get([Trial.remote().where.remote() for _ in range(2)])))
        ray.shutdown()
    """)
    env = {name: value for name, value in fork_env.items() if name not in ("OMP_NUM_THREADS", "RAY_ADDRESS")}
    ray_folder = tempfile.mkdtemp(prefix="rt")  # short: Ray's socket paths live under it
    try:
        ran = subprocess.run([sys.executable, "-c", probe, ray_folder], env=env, capture_output=True, text=True,
                             timeout=300)
    finally:
        shutil.rmtree(ray_folder, ignore_errors=True)
    assert ran.returncode == 0, ran.stderr[-3000:]
    trials = json.loads(ran.stdout.strip().splitlines()[-1])
    for trial in trials:
        assert "--serve" in trial["parent"] and trial["preloaded"]
        # Ray sets OMP_NUM_THREADS=1 for a 1-CPU actor after the server imported PyTorch with all the cores
        assert trial["omp"] == "1" and trial["threads"] == 1
