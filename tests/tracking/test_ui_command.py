"""`sentsweep ui`: MLflow's UI over a sweep store, one worker on 127.0.0.1, the newest sweep's link printed, and
Ctrl-C ending it and its processes without a traceback; a store or port it cannot serve refused in one line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.cli import main
from tests.helpers.cluster_helpers import PROJECT, free_port, sqlite_store


def test_a_missing_store_is_refused_in_one_line(tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'none.db'}"
    assert main(["ui", "--tracking-uri", store]) == 2
    assert capsys.readouterr().err == (f"error: --tracking-uri {store}: no MLflow store at {tmp_path / 'none.db'} "
                                       "(run a sweep first, or name its store)\n")
    assert not (tmp_path / "none.db").exists()


def test_a_port_in_use_is_refused_in_one_line(tmp_path, capsys):
    store = sqlite_store(tmp_path)
    MlflowClient(store).search_experiments()  # the store's tables
    capsys.readouterr()  # MLflow's log of creating them
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        assert main(["ui", "--tracking-uri", store, "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --port {port}: 127.0.0.1:{port} is in use (") and err.count("\n") == 1


def group_members(group: int) -> list[str]:
    """The command lines of the live processes of process group `group`."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                if int(fields[2]) == group and fields[0] != "Z":
                    members.append(open(f"/proc/{entry}/cmdline").read().replace("\0", " "))
            except (OSError, IndexError):
                continue
    return members


@pytest.mark.slow  # starts MLflow's server
def test_it_serves_the_store_prints_the_newest_sweeps_link_and_stops_cleanly_on_ctrl_c(tmp_path):
    store = sqlite_store(tmp_path)
    client = MlflowClient(store)
    experiment = client.create_experiment("served")
    client.create_run(experiment, run_name="older", tags={"role": "sweep"})
    time.sleep(0.01)
    newest = client.create_run(experiment, run_name="newest", tags={"role": "sweep"}).info.run_id
    client.set_tag(newest, "answer_view", f"{newest}-stage-grid")
    port = free_port()
    ui = subprocess.Popen([sys.executable, "-m", "sentsweep", "ui", "--tracking-uri", store, "--port", str(port)],
                          cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)  # a terminal's foreground group: Ctrl-C signals all of it
    try:
        lines = [ui.stdout.readline() for _ in range(2)]
        assert lines[0] == f"starting MLflow's UI on http://127.0.0.1:{port} (one worker); Ctrl-C stops it\n"
        assert lines[1] == (f"MLflow: newest: http://127.0.0.1:{port}/#/experiments/{experiment}/runs?workflowType="
                            f"machine_learning&viewStateShareKey={newest}-stage-grid\n")
        servers = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(ui.pid)], capture_output=True,
                                                       text=True).stdout.split()]
        assert len(servers) == 1
        server = group_members(servers[0])
        # the server and its one uvicorn worker, no job runner beside them
        assert len(server) == 2 and sum("uvicorn" in command for command in server) == 1, server
    finally:
        os.killpg(ui.pid, signal.SIGINT)  # Ctrl-C
        out, err = ui.communicate(timeout=120)
    assert ui.returncode == 0, err
    assert out == "\nstopping MLflow's UI\n" and "Traceback" not in err, (out, err)
    assert group_members(servers[0]) == []
