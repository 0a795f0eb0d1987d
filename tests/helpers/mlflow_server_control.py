"""`python tests/helpers/mlflow_server_control.py stop|start FOLDER`: stop (kill, and wait until its port is closed) or
start (and wait until it answers) the MLflow server a test made in FOLDER
(`tests.helpers.cluster_helpers.MlflowServer`).
The fault matrix's drivers run it at their fault points (`sentsweep.faults`: BLINK, OUTAGE, CRASH)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.helpers.cluster_helpers import MlflowServer  # noqa: E402

if __name__ == "__main__":
    action, folder = sys.argv[1:]
    server = MlflowServer.attach(Path(folder))
    if action == "stop":
        server.kill()
    elif action == "start":
        server.start()
    else:
        sys.exit(f"unknown action {action!r}: stop or start")
