"""A sweep's run records the command that started it (credentials removed) and its typed options; `sentsweep rerun
RUN_ID` starts it again into a new sweep run linked to the old one, says where the recorded provenance differs, and
compares the tables; bad input ends in one line and exit code 2."""

from __future__ import annotations

import json
import os
import sys

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.cli import main as sentsweep_main
from sentsweep.tracking import command_record
from sentsweep.tracking.command_record import (
    COMMAND_TAG,
    OPTIONS_ARTIFACT,
    RERUN_OF_TAG,
    RERUN_OF_VARIABLE,
    command_operations,
    note_command,
    noted_command,
    options_json,
    provenance_differences,
)
from tests.helpers.cluster_helpers import sqlite_store


def typed_options(argv: list[str]):
    from sentsweep.experiments import get_experiment
    from sentsweep.sweep.config.options import parse_options

    definition = get_experiment("tsdae_deletion")
    return parse_options(definition.options, argv, "python sweeps/tsdae_deletion.py", "", "")


def test_the_noted_command_has_no_credentials_and_names_its_folder_and_script(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command_record, "_noted", None)
    argv = ["--quick", "--tracking-uri", "postgresql://ada:s3cret@db.example:5432/mlflow", "--seeds", "2"]
    monkeypatch.setattr(sys, "argv", ["sweeps/tsdae_deletion.py", *argv])
    note_command(argv, "python sweeps/tsdae_deletion.py", "tsdae_deletion")
    command = noted_command()
    assert "s3cret" not in json.dumps(command)
    assert command["options_argv"] == ["--quick", "--tracking-uri", "postgresql://ada:***@db.example:5432/mlflow",
                                       "--seeds", "2"]
    assert command["argv"][0] == "sweeps/tsdae_deletion.py" and command["cwd"] == str(tmp_path)
    assert command["script"] == str(tmp_path / "sweeps" / "tsdae_deletion.py")
    assert command["entry_point"] == "python sweeps/tsdae_deletion.py" and command["experiment"] == "tsdae_deletion"


def test_the_options_are_recorded_as_typed_values_and_a_rerun_is_linked(monkeypatch):
    monkeypatch.setattr(command_record, "_noted", {"options_argv": ["--quick"]})
    monkeypatch.setenv(RERUN_OF_VARIABLE, "0123abcd")
    options = typed_options(["--quick", "--seeds", "3", "--max-steps", "4", "--ratios", "0.3", "0.6",
                             "--tracking-uri", "http://bob:pw@127.0.0.1:5000"])
    operations = {operation.get("file") or operation["key"]: operation for operation in command_operations(options)}
    recorded = json.loads(operations[OPTIONS_ARTIFACT]["content"])
    assert recorded["seeds"] == {"type": "str", "value": "3"} and recorded["max_steps"] == {"type": "int", "value": 4}
    assert recorded["ratios"] == {"type": "tuple", "value": [0.3, 0.6]}
    assert recorded["quick"] == {"type": "bool", "value": True}
    assert recorded["tracking_uri"]["value"] == "http://bob:***@127.0.0.1:5000"
    assert json.loads(operations[COMMAND_TAG]["value"]) == {"options_argv": ["--quick"]}
    assert operations[RERUN_OF_TAG]["value"] == "0123abcd"
    assert "pw@" not in options_json(options)


def test_each_provenance_difference_is_one_line():
    recorded = {"sentsweep.commit": "aaa", "sentsweep.dirty": "false", "package.torch": "2.5.0",
                "package.mlflow": "3.1.0", "node.hostname": "old-host"}
    current = {"sentsweep.commit": "bbb", "sentsweep.dirty": "false", "package.torch": "2.6.0",
               "package.mlflow": "3.1.0", "node.hostname": "new-host"}
    assert provenance_differences(recorded, current) == [
        "commit differs: the run recorded aaa, this re-run has bbb",
        "package torch differs: the run recorded 2.5.0, this re-run has 2.6.0"]
    assert provenance_differences(recorded, recorded) == []


def test_the_rerun_replaces_the_recorded_store_by_the_one_given():
    from sentsweep.sweep_rerun import with_tracking_uri

    assert with_tracking_uri(["--quick", "--tracking-uri", "http://u:***@h", "--seeds", "2"], "http://u:pw@h") == [
        "--quick", "--seeds", "2", "--tracking-uri", "http://u:pw@h"]
    assert with_tracking_uri(["--tracking-uri=sqlite:///a.db"], "sqlite:///b.db") == ["--tracking-uri",
                                                                                     "sqlite:///b.db"]


def test_bad_input_ends_in_one_line_and_exit_2(tmp_path, capsys):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert sentsweep_main(["rerun", "0123456789abcdef", "--tracking-uri", uri]) == 2
    assert capsys.readouterr().err == f"error: no MLflow store at {uri}\n"
    assert not (tmp_path / "mlflow.db").exists()  # none made by asking

    client = MlflowClient(uri)
    run = client.create_run(client.create_experiment("plain"))
    capsys.readouterr()
    assert sentsweep_main(["rerun", "0123456789abcdef", "--tracking-uri", uri]) == 2
    assert capsys.readouterr().err == f"error: run '0123456789abcdef': no such run at {uri}\n"
    assert sentsweep_main(["rerun", run.info.run_id, "--tracking-uri", uri]) == 2
    assert capsys.readouterr().err == (f"error: run '{run.info.run_id}' is not a sweep's run: it has no recorded "
                                       f"command (tag {COMMAND_TAG})\n")

    assert sentsweep_main(["rerun", run.info.run_id, "--tracking-uri", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "127.0.0.1:9" in err and err.count("\n") == 1


@pytest.mark.slow  # runs a sweep (2 trials of 4 steps) twice
def test_a_rerun_is_linked_says_the_changed_commit_and_finds_the_same_tables(tmp_path, monkeypatch, shared_ray):
    import ray

    from sentsweep.experiments import get_experiment
    from sentsweep.sweep import run_sweep
    from sentsweep.sweep_rerun import current_provenance, rerun

    monkeypatch.chdir(tmp_path)
    uri = sqlite_store(tmp_path)
    try:
        assert run_sweep(get_experiment("tsdae_deletion"), [
            "--quick", "--ratios", "0.6", "--poolings", "mean", "--seeds", "2", "--max-steps", "4", "--eval-steps",
            "2", "--tracking-uri", uri, "--output-dir", "out"]) == 0
        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name("tsdae_deletion")
        (old,) = client.search_runs([experiment.experiment_id], f"tags.`{COMMAND_TAG}` != ''")
        assert json.loads(old.data.tags[COMMAND_TAG])["cwd"] == str(tmp_path)
        client.set_tag(old.info.run_id, "sentsweep.commit", "0" * 40)  # the run as if another commit made it

        monkeypatch.chdir(os.path.dirname(tmp_path))  # the re-run goes back to the recorded folder by itself
        lines: list[str] = []
        result = rerun(old.info.run_id, uri, echo=lines.append)
    finally:
        ray.shutdown()
    commit = current_provenance()["sentsweep.commit"]
    assert [line for line in lines if "differs:" in line] == [
        f"commit differs: the run recorded {'0' * 40}, this re-run has {commit}"]
    assert result.exit_code == 0 and result.new_run_id not in (None, old.info.run_id)
    assert client.get_run(result.new_run_id).data.tags[RERUN_OF_TAG] == old.info.run_id
    (stage,) = result.comparisons
    assert (stage.shared, stage.only_old, stage.only_new, stage.cells) == (1, [], [], 2)
    assert stage.significant == [] and stage.largest_difference == 0.0
    assert lines[-1] == "  " + stage.line(0.05, "holm")
    assert "none differs significantly" in lines[-1]
