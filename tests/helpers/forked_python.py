"""Python scripts that tests run as their own processes (sweep drivers above all), forked from
`sentsweep.worker_fork`'s server instead of started afresh.

A sweep's driver imports PyTorch, transformers' BERT, SciPy and scikit-learn before it checks its first setting: some
6 s of CPU per process, and the tests start dozens (docs/performance.md, "The test suite's time"). The fork server
that Ray's workers come from has them imported already. `start_python` has it fork a `python FILE.py ...` command,
which then runs as `subprocess.Popen(command, start_new_session=True)` would run it: in a session and process group
of its own (a test's or the fault matrix's signal to that group reaches the driver and the Ray it started, and
`os.killpg(process.pid, ...)` reaps what it left), with the test's streams, folder and environment, and ending as
that interpreter would (`sentsweep.worker_fork._become_worker`). What it returns answers `pid`, `poll()`, `wait()`
and `returncode` as a `Popen` does; `run_python` is `subprocess.run(..., capture_output=True, text=True)` on it.

A fresh interpreter still runs any other command (`python -m ...`, `python -c ...`), a command where
`SENTSWEEP_FORKED_WORKERS=0` (the switch of Ray's forked workers), on a node with an NVIDIA GPU, or where no fork
server can be had, and the tests that start their commands themselves: the demo's printed lines
(tests/sweep/test_progress.py), the Hugging Face cache's tests (an environment of their own would start a server of its
own, and cost what it saves), a closed pipe and `--help` (tests/test_command_line.py,
tests/sweep/test_sweep_options.py).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from sentsweep.worker_fork import SWITCH, fork_python, read_ending


class ForkedProcess:
    """A script forked by the fork server, seen as `subprocess.Popen` shows a process."""

    def __init__(self, args: list[str], connection: socket.socket, pid: int) -> None:
        self.args, self.pid, self.returncode = args, pid, None
        self._connection = connection  # held open: the child ends when it closes

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._connection], [], [], 0)[0]:
            self._take_ending()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._connection], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._take_ending()
        return self.returncode

    def _take_ending(self) -> None:
        ending = read_ending(self._connection)
        self.returncode = -ending["signal"] if "signal" in ending else ending.get("exit", 1)
        self._connection.close()


def start_python(command: list[str], cwd: Path, env: dict[str, str], stdout: IO, stderr: IO | int,
                 ) -> ForkedProcess | subprocess.Popen:
    """`command` in `cwd` with `env`, its output to the file `stdout` and its errors to `stderr` (a file, or
    `subprocess.STDOUT`), its input empty, in a session of its own. A `python <script>.py ...` command is forked from
    the fork server; any other, or where no server can be had, is started afresh."""
    if command[0] == sys.executable and command[1:2] and command[1].endswith(".py") and env.get(SWITCH) != "0":
        errors = stdout if stderr == subprocess.STDOUT else stderr
        with open(os.devnull, "rb") as empty:
            forked = fork_python(command[1:], str(cwd), dict(env), [empty.fileno(), stdout.fileno(), errors.fileno()])
        if forked is not None:
            return ForkedProcess(command, *forked)
    return subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                            start_new_session=True, env=env)


def run_python(command: list[str], cwd: Path, env: dict[str, str], timeout: float,
               ) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, text=True, timeout=timeout)` in `cwd` with `env`, the command
    started by `start_python`; past `timeout`, its process group is killed and `subprocess.TimeoutExpired` raised."""
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        process = start_python(command, cwd, env, output, errors)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        output.seek(0)
        errors.seek(0)
        return subprocess.CompletedProcess(command, process.returncode, output.read().decode(), errors.read().decode())
