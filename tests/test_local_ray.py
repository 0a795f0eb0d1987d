"""The driver's Ray starts on a loaded machine: a local node that misses one of Ray's fixed startup deadlines is
started again (sentsweep.sweep.local_ray)."""

import subprocess
import sys
import textwrap

import pytest

from tests.cluster_helpers import PROJECT, RAY_ENV

pytestmark = pytest.mark.slow

# Holds the first dashboard agent of the test 20 s before it imports anything, as a machine too loaded to import it
# within the raylet's 15 s would; the agents after it start at once.
SLOW_FIRST_AGENT = """
import os, sys, time
if sys.argv[0].endswith(os.path.join("dashboard", "agent.py")) and not os.path.exists(os.environ["SLOW_AGENT_MARK"]):
    open(os.environ["SLOW_AGENT_MARK"], "w").close()
    time.sleep(20)
"""


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
