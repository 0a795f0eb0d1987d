"""The driver's Ray (sentsweep.sweep.compute.local_ray): started on a loaded machine, a local node that misses one of
Ray's fixed startup deadlines is started again; started for forked workers, it prestarts none of Ray's own."""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.cluster_helpers import PROJECT, RAY_ENV

# Holds the first dashboard agent of the test 20 s before it imports anything, as a machine too loaded to import it
# within the raylet's 15 s would; the agents after it start at once.
SLOW_FIRST_AGENT = """
import os, sys, time
if sys.argv[0].endswith(os.path.join("dashboard", "agent.py")) and not os.path.exists(os.environ["SLOW_AGENT_MARK"]):
    open(os.environ["SLOW_AGENT_MARK"], "w").close()
    time.sleep(20)
"""


@pytest.mark.slow
def test_a_local_ray_node_that_misses_a_startup_deadline_is_started_again(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SLOW_FIRST_AGENT)
    driver = textwrap.dedent("""
        import ray
        from sentsweep.sweep.compute.local_ray import start_ray

        start_ray(include_dashboard=False, log_to_driver=False, num_cpus=1)
        print("alive nodes:", sum(node["Alive"] for node in ray.nodes()))
        ray.shutdown()
    """)
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                            env=RAY_ENV | {"PYTHONPATH": f"{tmp_path}:{PROJECT}",
                                           "SLOW_AGENT_MARK": str(tmp_path / "slowed")})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "slowed").exists()  # the first agent was held
    assert "timed out during startup" in result.stderr and "starting it again (2/4)" in result.stderr
    assert "alive nodes: 1" in result.stdout


@pytest.mark.parametrize(("runtime_env", "user_value", "seen"), [
    ({"py_executable": "python -P -m sentsweep.worker_fork"}, None, "0"),  # the fork server's workers: none prestarted
    ({"py_executable": "python -P -m sentsweep.worker_fork"}, "1", "1"),  # the user's own choice is kept
    ({}, None, None),  # Ray's own workers (SENTSWEEP_FORKED_WORKERS=0, or a cluster elsewhere): Ray's default
    (None, None, None),  # no runtime environment at all, as ray.init takes it
])
def test_a_node_started_for_forked_workers_prestarts_none_of_rays_own(monkeypatch, runtime_env, user_value, seen):
    """The raylet reads RAY_prestart_worker_first_driver from the environment `ray.init` starts it with."""
    import ray

    from sentsweep.sweep.compute.local_ray import start_ray

    monkeypatch.setenv("RAY_prestart_worker_first_driver", user_value or "")  # put back as it was after the test
    if user_value is None:
        monkeypatch.delenv("RAY_prestart_worker_first_driver")
    at_init = []
    monkeypatch.setattr(ray, "init", lambda **arguments: at_init.append(
        os.environ.get("RAY_prestart_worker_first_driver")))
    start_ray(runtime_env=runtime_env)
    assert at_init == [seen]
    assert os.environ.get("RAY_prestart_worker_first_driver") == user_value  # the driver's own, as it was


@pytest.mark.slow
@pytest.mark.parametrize("point", ["ray", "exit"])
def test_a_sigterm_as_ray_starts_or_ends_stops_the_driver_in_one_line_and_leaves_no_process(tmp_path, point):
    """SIGTERM (`kill PID`) while the driver's own Ray starts (sent once its node's first process runs, while
    `ray.init` waits for the node): exit 130, one line, none of the node's processes left; SIGTERM as the driver of
    a finished sweep exits (Ray's exit handler about to end its Ray): exit 0, no traceback, no process left."""
    import psutil

    from sentsweep.faults import FAULT_ENV
    from tests.helpers.cluster_helpers import sqlite_store, start_sweep

    process = start_sweep("tsdae_deletion.py", tmp_path, "--tracking-uri", sqlite_store(tmp_path), "--ratios", "0.3",
                          "--poolings", "cls", "--seeds", "1", "--max-steps", "2", "--eval-steps", "1",
                          env={FAULT_ENV: f"{point}:0:TERM", "RAY_ADDRESS": ""})  # its own Ray
    code = process.wait(600)
    log = (tmp_path / "driver.log").read_text()
    assert f"[{FAULT_ENV}] SIGTERM at {point} of stage 0" in log
    assert "Traceback" not in log, log[-3000:]
    if point == "ray":
        assert code == 130, log[-3000:]
        assert log.rstrip().splitlines()[-1] == "interrupted before any trial started: nothing to resume", log[-3000:]
    else:
        assert code == 0, log[-3000:]
    left = []
    for pid in psutil.pids():  # the driver led its session, as a terminal's job does: Ray's processes joined it
        try:
            if os.getsid(pid) == process.pid:
                left.append(pid)
        except OSError:
            pass
    assert not left, [psutil.Process(pid).cmdline() for pid in left if psutil.pid_exists(pid)]
