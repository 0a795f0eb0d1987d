"""The driver's Ray: `ray.init`, started again when a local node misses one of Ray's own startup deadlines.

Ray gives the processes of a node it starts fixed deadlines, whatever the machine's load: the raylet aborts when its
dashboard agent (a Python process that imports much of Ray) has not written its port file within 15 s
(`NodeManager::WaitForDashboardAgentPorts`), and `ray.init` gives up when the raylet has not registered within 30 s
("The current node timed out during startup", `ray._private.node.Node`). On a machine whose cores are shared (a busy
head node, a CI runner; 2 cores at a load of 20 here), that agent can take longer, and the sweep died before its
first trial. Such a start is tried again, `START_ATTEMPTS` times at most, the processes of the failed one ended
first; the next agent loads its modules from a warm page cache. A driver that joins a running cluster
(RAY_ADDRESS) starts no node and is not retried.

A node started for a job whose workers Ray starts through `py_executable` (the fork server's launcher,
`sentsweep.worker_fork`) prestarts none: Ray starts one default worker per CPU when a node's first driver connects
(its `prestart_worker_first_driver`), each importing Ray (about 0.75 s of CPU), and a trial of that job, whose
runtime environment differs, never runs in one.

A Ctrl-C or SIGTERM while Ray starts stops the driver as one before it does ("interrupted before any trial
started", exit 130, `sentsweep.sweep.launch.entry_point`), once the processes the start began are ended. Both signals
are held while `ray.init` runs (`_signals_held`) and acted on once it returns: a KeyboardInterrupt raised in the middle
of it was lost where Python runs code that ignores exceptions (its fork handlers, as Ray starts its processes), and
`ray.init` installs a SIGTERM handler of its own (`sys.exit(15)`: no word, the node's agents and workers left running
for tens of seconds), which is kept out (`ray._private.utils.set_sigterm_handler`, the one function Ray 2.x installs it
through). Ray is then shut down, and every process that appeared under the driver meanwhile (the GCS, the raylet, its
agents and workers, whose command lines Ray renames) ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from sentsweep.faults import fault_point

START_ATTEMPTS = 4
STARTUP_TIMED_OUT = "timed out during startup"  # ray._private.node.Node's message
# Ray's setting, which a raylet reads from its environment (RAY_<name>) as it starts; a value the user set is kept
NO_PRESTARTED_WORKERS = ("RAY_prestart_worker_first_driver", "0")


def start_ray(**init_arguments):
    """`ray.init(**init_arguments)`, tried again while Ray's local node times out during its startup; returns
    `ray.init`'s context (None where Ray was running already). With a `py_executable` in `runtime_env`, a node
    it starts prestarts no workers (the module docstring): the setting is in the environment of the processes
    `ray.init` starts, not in the driver's afterwards."""
    import ray

    name, value = NO_PRESTARTED_WORKERS
    added = "py_executable" in (init_arguments.get("runtime_env") or {}) and name not in os.environ
    if added:
        os.environ[name] = value
    before = _descendants()
    fault_point("ray", 0)  # the fault matrix's signal while Ray starts
    try:
        with _signals_held() as received:
            context = _init(init_arguments)
    finally:
        if added:
            del os.environ[name]
    if received:  # Ctrl-C or SIGTERM while Ray started: what it started is ended
        ray.shutdown()
        _end_processes(_descendants() - before)
        raise KeyboardInterrupt
    return context


def _init(init_arguments: dict):
    """`ray.init`, tried again while the node times out during its startup (the module docstring)."""
    import ray

    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return ray.init(**init_arguments)
        except Exception as error:  # noqa: BLE001 - Ray raises a bare Exception for this one
            if STARTUP_TIMED_OUT not in str(error) or attempt == START_ATTEMPTS:
                raise
            end_ray_processes()
            print(f"Ray's local node missed one of Ray's startup deadlines ({error}); starting it again "
                  f"({attempt + 1}/{START_ATTEMPTS})", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _signals_held():
    """Within, SIGINT and SIGTERM are held (yields the list of those received) and `ray.init` installs no SIGTERM
    handler (the module docstring); a SIGINT the process ignores (a background job's) stays ignored."""
    import ray._private.utils as ray_utils

    received: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, lambda number, frame: received.append(number))
    install = ray_utils.set_sigterm_handler
    ray_utils.set_sigterm_handler = lambda handler: None
    try:
        yield received
    finally:
        ray_utils.set_sigterm_handler = install
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _descendants() -> set:
    """This process's descendants (`psutil.Process`es)."""
    import psutil  # lazy: psutil

    return set(psutil.Process().children(recursive=True))


def _end_processes(processes: set) -> None:
    """Kill `processes` (those still running) and wait for them."""
    import psutil

    for process in processes:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(list(processes), timeout=30)


def end_ray_processes() -> None:
    """Kill the processes a failed `ray.init` left running (this process's children that run Ray's code)."""
    import psutil  # lazy: psutil
    import ray

    ray_code = str(Path(ray.__file__).parent)
    children = [child for child in psutil.Process().children(recursive=True) if _runs(child, ray_code)]
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(children, timeout=30)


def _runs(process, folder: str) -> bool:
    try:
        return any(folder in part for part in process.cmdline())
    except Exception:  # noqa: BLE001 - ended meanwhile, or not ours to read
        return False
