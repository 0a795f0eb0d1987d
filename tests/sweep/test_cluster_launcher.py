"""The cluster launcher for real: cluster-onprem.yaml pointed at 127.0.0.1, `ray up`, `ray submit` of the quick NM
sweep, its runs in the head's MLflow server, `ray down` (scripts/cluster_smoke.sh, also `make cluster-smoke`).

Opt-in (SENTSWEEP_CLUSTER_TEST=1), and as root: it installs openssh-server and rsync, creates a user with an SSH
key and starts an sshd on 127.0.0.1:22 (once), and runs for minutes. The config generator is checked always.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest
import yaml

from sentsweep.tracking.store import ANSWER_TITLE
from tests.helpers.cluster_helpers import PROJECT

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

SCRIPT = PROJECT / "scripts" / "cluster_smoke.sh"
_spec = importlib.util.spec_from_file_location("cluster_local_config", PROJECT / "scripts" / "cluster_local_config.py")
cluster_local_config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster_local_config)


def test_local_config_is_the_onprem_config_pointed_at_this_machine():
    from ray.autoscaler._private.util import prepare_config, validate_config

    onprem = yaml.safe_load((PROJECT / "cluster-onprem.yaml").read_text())
    config = cluster_local_config.local_config("sentsweep-ray", "/keys/id", "/home/sentsweep-ray", 25000, 26379, 28265,
                                               "/tmp/ssr", "/keys/ray_auth_token")
    validate_config(prepare_config(yaml.safe_load(yaml.safe_dump(config))))
    assert config["provider"] == {"type": "local", "head_ip": "127.0.0.1", "worker_ips": []}
    # the same mounts, the smoke test's own Ray token in place of the client's
    assert onprem["file_mounts"]["~/.ray/auth_token"] == "~/.ray/auth_token"
    assert config["file_mounts"] == onprem["file_mounts"] | {"~/.ray/auth_token": "/keys/ray_auth_token"}
    assert config["rsync_filter"] == onprem["rsync_filter"]
    assert "export RAY_AUTH_MODE=token" in " ".join(config["setup_commands"])  # every node's Ray, and the driver
    commands = " ".join(config["setup_commands"] + config["head_setup_commands"] + config["head_start_ray_commands"])
    assert "MLFLOW_TRACKING_URI=http://127.0.0.1:25000" in commands and "--port 25000" in commands
    assert "--port=26379" in commands and "export RAY_TMPDIR=/tmp/ssr" in commands
    assert "/shared/" not in commands.replace("/home/sentsweep-ray/shared/", "")
    assert not re.search(r"(?<!\d)(5000|6379)(?!\d)", commands), "a default port left"
    # the same commands as the on-premise config's, with the ports and the shared folder replaced
    assert len(config["head_start_ray_commands"]) == len(onprem["head_start_ray_commands"])
    assert len(config["setup_commands"]) == len(onprem["setup_commands"]) + 1


@pytest.mark.skipif(os.environ.get("SENTSWEEP_CLUSTER_TEST") != "1",
                    reason="opt-in: SENTSWEEP_CLUSTER_TEST=1, as root (sets up a user and an sshd on 127.0.0.1:22; "
                    "minutes); or `make cluster-smoke`")
def test_ray_submit_of_the_quick_sweep_through_the_launcher_logs_to_the_heads_mlflow_server(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("scripts/cluster_smoke.sh sets up a user and an sshd: run as root")
    env = os.environ | {"VENV": str(PROJECT / ".venv") if (PROJECT / ".venv").is_dir() else str(sys.prefix)}
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=3600)
    output = result.stdout + result.stderr
    (tmp_path / "cluster_smoke.log").write_text(output)
    assert result.returncode == 0, output[-5000:]
    assert "stage 2/2 'method x w x pooling'" in output and "| mlm+nm | 0.01 | cls |" in output  # the table
    port = os.environ.get("MLFLOW_PORT", "25000")
    assert f"{ANSWER_TITLE}\n    http://127.0.0.1:{port}/#/experiments/" in output  # logged to the head's server
    assert "24 trial runs, 24 FINISHED" in output
    assert "cluster smoke test passed" in output
