"""The driver's Ray (sentsweep.sweep.local_ray): started on a loaded machine, a local node that misses one of Ray's
fixed startup deadlines is started again; started for forked workers, it prestarts none of Ray's own."""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.cluster_helpers import PROJECT, RAY_ENV

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
        from sentsweep.sweep.local_ray import start_ray

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

    from sentsweep.sweep.local_ray import start_ray

    monkeypatch.setenv("RAY_prestart_worker_first_driver", user_value or "")  # put back as it was after the test
    if user_value is None:
        monkeypatch.delenv("RAY_prestart_worker_first_driver")
    at_init = []
    monkeypatch.setattr(ray, "init", lambda **arguments: at_init.append(
        os.environ.get("RAY_prestart_worker_first_driver")))
    start_ray(runtime_env=runtime_env)
    assert at_init == [seen]
    assert os.environ.get("RAY_prestart_worker_first_driver") == user_value  # the driver's own, as it was
