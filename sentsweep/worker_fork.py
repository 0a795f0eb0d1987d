"""Ray worker processes forked from a process that has already imported PyTorch and sentence-transformers.

Each process Ray starts for a trial imports PyTorch, transformers, sentence-transformers and Ray before it trains:
some 7 s of CPU, most of a small trial's cost (docs/performance.md). Ray starts a worker with a command it builds
itself and lets a job name the program that runs it (`runtime_env={"py_executable": ...}`, `worker_runtime_env()`):
here `python -P -m sentsweep.worker_fork <Ray's worker arguments>`, the launcher below.

- **The launcher** (`launch`) stands where Ray's worker would: Ray started it and watches it. It asks the node's
  fork server for a worker, handing over its standard streams, environment, working folder and arguments, forwards
  the signals it gets to the worker, and exits as the worker does. Where no server answers it starts one; where
  none can start, it runs Ray's worker itself, as Ray would have (`os.execv`).
- **The fork server** (`serve`) imports `PRELOADED` (third-party packages only: sentsweep's and a researcher's own
  modules are imported after the fork, from the checkout as it is then) and freezes them (`gc.freeze`: the
  garbage collections of its children leave them out), then forks one child per request. The child takes the
  launcher's streams, environment, folder and arguments and runs Ray's worker script as `python <script>` would;
  it ends when its launcher does (the end of their socket). The server reaps its children, tells
  each launcher how its worker ended, and ends after `IDLE_EXIT_S` with no child and no request.
- **One server per interpreter, packages, environment and files**: its socket's name is a digest of the
  interpreter, the modification time of its site-packages folders (an install changes them), every environment
  variable but those no preloaded package reads (`UNKEYED_PREFIXES`, `UNKEYED_VARIABLES`), and the mount namespace
  (Ray nodes on one machine that see different files each get their own). A package reads some of its settings
  from the environment when it is imported (Hugging Face's cache and offline mode, OpenMP's thread count), so a
  worker is only forked from a server started with the environment it would have had.
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import json
import os
import runpy
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# What the fork server imports before it forks: what each trial process of a sweep imports first, and the
# third-party packages that Ray and Ray Tune import (about 0.1 s of CPU in each worker; the rest of Ray's import, some
# 0.5 s, is Ray's own modules). Not Ray: its core library (ray/_raylet.so), once imported, keeps the raylet's pid of
# the first worker's environment, and the workers of any later Ray forked from that server end at once ("the local
# raylet failed").
PRELOADED = ("torch", "sentence_transformers", "transformers.models.bert.modeling_bert", "scipy.stats",
             "sklearn.metrics", "pydantic", "requests", "jsonschema", "google.protobuf", "msgpack", "rich")
# Left out of the server's key, read by no package of PRELOADED when it is imported (a worker reads them, if at all,
# after the fork, from its own environment): the settings of the packages the server does not import (Ray, Ray Tune,
# MLflow, MTEB, pytest, sentsweep), many set per worker, driver, test or cluster (Ray's job, raylet and token file,
# MLflow's telemetry session and tracking URI, MTEB's cache, pytest's running test, the fault matrix's fault); what
# Ray adds to its workers' environment for packages the server does not import (Ray Tune's PL_DISABLE_FORK for PyTorch
# Lightning, the raylet's SPT_NOENV for setproctitle and _RJEM_MALLOC_CONF for jemalloc), so that a driver forked from
# a server (tests/helpers/forked_python.py) shares it with its trials; what a process that ran a sweep in-process has
# set in its
# own environment, and so in that of the processes it starts afterwards (`ray.init` sets PYTHONBREAKPOINT, which
# Python reads when `breakpoint()` is called; Ray Tune's TensorBoard logger imports tensorboardX, which sets
# CRC32C_SW_MODE for the crc32c package, which no preloaded package imports); and the shell's own (the folder it was
# in, its depth, its last command).
UNKEYED_PREFIXES = ("RAY_", "TUNE_", "MLFLOW_", "_MLFLOW_", "MTEB_", "PYTEST_", "SENTSWEEP_")
UNKEYED_VARIABLES = frozenset({"SPT_NOENV", "PL_DISABLE_FORK", "_RJEM_MALLOC_CONF", "PYTHONBREAKPOINT",
                               "CRC32C_SW_MODE", "PWD", "OLDPWD", "SHLVL", "_"})
SWITCH = "SENTSWEEP_FORKED_WORKERS"  # "0": Ray starts each worker itself
# A node with an NVIDIA GPU: its workers are not forked (a process that has touched CUDA cannot be forked safely,
# and this was never tried on a GPU; its trials are long enough that a worker's start does not count).
GPU_DEVICE = Path("/dev/nvidiactl")
IDLE_EXIT_S = 120.0  # the server ends after this long with no child and no request
SERVER_START_S = 120.0  # how long a launcher waits for a server it started (its imports) before running Ray's worker
STREAMS = (0, 1, 2)


def worker_runtime_env() -> dict:
    """The part of a driver's `runtime_env` that has Ray start its workers through the launcher: Ray's
    `py_executable`, this module in the driver's interpreter (so only for a Ray on the driver's machine, where that
    interpreter is: `sentsweep.sweep.compute.ray_connection.ray_on_this_machine`). Empty where
    `SENTSWEEP_FORKED_WORKERS=0`."""
    if os.environ.get(SWITCH) == "0":
        return {}
    return {"py_executable": f"{shlex.quote(sys.executable)} -P -m sentsweep.worker_fork"}


def server_key(environment: dict[str, str]) -> str:
    """The digest naming the fork server for this interpreter, its installed packages and `environment`."""
    site_folders = sorted({path for path in sys.path if path.endswith("site-packages") and os.path.isdir(path)})
    described = {
        "mount namespace": os.readlink("/proc/self/ns/mnt"),  # the files a worker of this node sees
        "interpreter": os.path.realpath(sys.executable),
        "packages": [(folder, os.stat(folder).st_mtime_ns) for folder in site_folders],
        "environment": sorted((name, value) for name, value in environment.items()
                              if name not in UNKEYED_VARIABLES and not name.startswith(UNKEYED_PREFIXES)),
    }
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()[:20]


def server_socket_path(key: str) -> Path:
    folder = Path(tempfile.gettempdir()) / f"sentsweep-worker-fork-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{key}.sock"


# ---- the launcher -------------------------------------------------------------------------------------------------

def launch(worker_arguments: list[str]) -> None:
    """Run Ray's worker (`worker_arguments`: its script and its arguments) in a child of the fork server; exits
    as that worker does. Falls back to running it here where no server can be had or on a GPU node."""
    forked = fork_python(worker_arguments, os.getcwd(), dict(os.environ), list(STREAMS))
    if forked is None:
        _run_here(worker_arguments)  # a GPU node, no server, or it ended before it forked: nothing of it ran yet
    connection, child = forked
    for signal_number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
        signal.signal(signal_number, lambda number, _frame: _forward(child, number))
    ending = read_ending(connection)
    if "signal" in ending:
        signal.signal(ending["signal"], signal.SIG_DFL)
        os.kill(os.getpid(), ending["signal"])
    os._exit(ending.get("exit", 1))


def fork_python(argv: list[str], cwd: str, environment: dict[str, str], streams: list[int],
                ) -> tuple[socket.socket, int] | None:
    """Have the fork server for `environment` (started here if none answers) fork a child that runs `python
    <argv>` as that command would: in `cwd`, with `environment`, `streams` as its standard input, output and error,
    this process's blocked signals (which a started interpreter inherits; the server's own are those of whatever
    process started it, a Ray worker that blocks SIGINT, say), and a session of its own (as
    `subprocess.Popen(..., start_new_session=True)`). Returns the connection on which
    its ending arrives (`read_ending`; the child ends when this connection closes) and its pid, or None on a node
    with an NVIDIA GPU (`GPU_DEVICE`), where no server could be had, or where it ended before it forked."""
    if GPU_DEVICE.exists():
        return None
    path = server_socket_path(server_key(environment))
    connection = _connect(path) or _start_server(path, environment)
    if connection is None:
        return None
    blocked = sorted(int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    request = json.dumps({"argv": argv, "cwd": cwd, "env": environment, "blocked_signals": blocked}).encode()
    try:
        socket.send_fds(connection, [len(request).to_bytes(8, "big") + request], streams)
        return connection, int(_read_line(connection))
    except (OSError, ValueError):
        connection.close()
        return None


def read_ending(connection: socket.socket) -> dict:
    """How a forked child ended, once it has: {"exit": its exit code} or {"signal": the signal that ended it}."""
    try:
        return json.loads(_read_line(connection))
    except (OSError, ValueError):
        return {"exit": 1}  # the server ended with the child running; the child ends with this connection


def _forward(child: int, number: int) -> None:
    try:
        os.kill(child, number)
    except ProcessLookupError:
        pass


def _connect(path: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        return None
    return connection


def _start_server(path: Path, environment: dict[str, str]) -> socket.socket | None:
    """Start the fork server for `path` with `environment` (one launcher does, the others wait on its lock) and
    connect to it."""
    from filelock import FileLock  # lazy: filelock

    with FileLock(path.with_suffix(".lock")):
        connection = _connect(path)
        if connection is not None:
            return connection
        with open(path.with_suffix(".log"), "ab") as log:
            server = subprocess.Popen([sys.executable, "-P", "-m", "sentsweep.worker_fork", "--serve", str(path)],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/",
                                      env=environment, start_new_session=True, close_fds=True)
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline and server.poll() is None:
            connection = _connect(path)
            if connection is not None:
                return connection
            time.sleep(0.1)
    return None  # the server failed to start (its log says why) or is still importing


def _run_here(worker_arguments: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, *worker_arguments])


def _read_line(connection: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = connection.recv(4096)
        if not chunk:
            raise OSError("the fork server closed the connection")
        data += chunk
    return data.decode()


# ---- the fork server ----------------------------------------------------------------------------------------------

def serve(path: Path) -> None:
    """Import `PRELOADED`, listen on `path`, fork a worker per request; end after `IDLE_EXIT_S` idle."""
    for name in PRELOADED:
        __import__(name)
    # Python's garbage collector leaves what was imported (PyTorch's and transformers' modules, half a million
    # objects) out of every later collection, the forked children's included: each full one walked them all, 0.3 s of
    # CPU in Ray's import alone
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound_path = path.with_suffix(f".{os.getpid()}")
    listener.bind(str(bound_path))
    listener.listen(64)
    os.replace(bound_path, path)  # the name appears only once the server can answer
    own_socket = os.stat(path).st_ino
    children: dict[int, socket.socket] = {}  # pid: its launcher's connection
    idle_since = time.monotonic()
    try:
        while children or time.monotonic() - idle_since < IDLE_EXIT_S:
            readable, _, _ = select.select([listener], [], [], 1.0)
            if readable:
                connection, _ = listener.accept()
                child = _fork_worker(listener, connection, list(children.values()))
                if child is None:
                    connection.close()
                else:
                    children[child] = connection
            for pid, status in _ended_children():
                connection = children.pop(pid, None)
                if connection is not None:
                    _tell_ending(connection, status)
                if not children:
                    idle_since = time.monotonic()
    finally:
        try:
            if os.stat(path).st_ino == own_socket:  # not yet replaced by a newer server's
                path.unlink()
        except OSError:
            pass


def _fork_worker(listener: socket.socket, connection: socket.socket, others: list[socket.socket]) -> int | None:
    try:
        header, descriptors, _, _ = socket.recv_fds(connection, 8, len(STREAMS))
        header += _receive_exactly(connection, 8 - len(header))  # a stream socket may deliver it in parts
        request = json.loads(_receive_exactly(connection, int.from_bytes(header, "big")))
    except (OSError, ValueError):
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for held in (listener, *others):  # so that each launcher sees its own worker's end, and only that
            held.close()
        _become_worker(request, descriptors, connection)
    for descriptor in descriptors:
        os.close(descriptor)
    try:
        connection.sendall(f"{pid}\n".encode())
    except OSError:
        pass  # the launcher is gone; the child ends with it
    return pid


def _receive_exactly(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise OSError("the launcher closed the connection")
        data += chunk
    return data


def _ended_children():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def _tell_ending(connection: socket.socket, status: int) -> None:
    ending = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.waitstatus_to_exitcode(status)}
    try:
        connection.sendall((json.dumps(ending) + "\n").encode())
    except OSError:
        pass
    connection.close()


def _become_worker(request: dict, descriptors: list[int], connection: socket.socket) -> None:
    """In the forked child: take the launcher's streams, environment, folder and arguments, run the script as
    `python <script> <arguments>` would, and end as that interpreter would (non-daemon threads joined, then the
    `atexit` functions; an uncaught Ctrl-C ends it by SIGINT, a `sys.exit("message")` prints the message and exits
    1). Never returns."""
    code, interrupted = 1, False
    try:
        for target, descriptor in zip(STREAMS, descriptors):
            os.dup2(descriptor, target)
            os.close(descriptor)
        for signal_number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
            signal.signal(signal_number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked_signals"])  # the launcher's, not the server's
        os.setsid()
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _end_with_launcher(connection)
        script, *arguments = request["argv"]
        sys.argv = [script, *arguments]
        sys.path[0:0] = [os.path.dirname(os.path.abspath(script))]
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as ended:
        code = _exit_code(ended)
    except BaseException as failure:  # noqa: BLE001 - the script's own failure, printed as Python would
        interrupted = isinstance(failure, KeyboardInterrupt)
        sys.excepthook(type(failure), failure, failure.__traceback__)
    finally:
        _end_as_python_does(code, interrupted)


def _exit_code(ended: SystemExit) -> int:
    if ended.code is None or isinstance(ended.code, int):
        return ended.code or 0
    print(ended.code, file=sys.stderr)
    return 1


def _end_as_python_does(code: int, interrupted: bool) -> None:
    import threading

    try:
        threading._shutdown()  # what the interpreter's own exit does first: wait for the non-daemon threads
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        if interrupted:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code)


def _end_with_launcher(connection: socket.socket) -> None:
    """End this worker when its launcher's end of `connection` closes (the launcher was killed)."""
    import threading

    def watch() -> None:
        try:
            while connection.recv(1):
                pass
        except OSError:
            pass
        os._exit(1)

    threading.Thread(target=watch, name="sentsweep-launcher-watch", daemon=True).start()


def main(arguments: list[str]) -> None:
    if arguments[:1] == ["--serve"]:
        serve(Path(arguments[1]))
    elif arguments and not arguments[0].startswith("-"):
        launch(arguments)
    else:  # interpreter flags before the script (Ray's `-S`, `-s`): run as Ray would, unforked
        _run_here(arguments)


if __name__ == "__main__":
    main(sys.argv[1:])
