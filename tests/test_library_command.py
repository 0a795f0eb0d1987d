"""A sweep started by `sentsweep.run` notes the command line of the same sweep for its run's record (what
`sentsweep rerun` reads), credentials removed; a definition of one's own, which no command names, notes none."""

from __future__ import annotations

import os

import pytest

from sentsweep import api
from sentsweep.tracking import command_record
from sentsweep.tracking.command_record import note_command, noted_command


@pytest.fixture(autouse=True)
def no_note_left(monkeypatch):
    """The process's noted command as it was, after each test."""
    monkeypatch.setattr(command_record, "_noted", None)


def test_a_library_call_notes_the_command_line_of_the_same_sweep():
    options = ["--quick", "--tracking-uri", "postgresql://user:secret@db/mlflow"]
    api._note_command(["sentsweep", "run", "tsdae_deletion", *options], options, "tsdae_deletion")
    assert noted_command() == {
        "argv": ["sentsweep", "run", "tsdae_deletion", "--quick", "--tracking-uri", "postgresql://user:***@db/mlflow"],
        "options_argv": ["--quick", "--tracking-uri", "postgresql://user:***@db/mlflow"],
        "entry_point": "sentsweep run tsdae_deletion", "script": "", "experiment": "tsdae_deletion",
        "cwd": os.getcwd()}


def test_a_definition_of_ones_own_leaves_no_earlier_command_noted():
    note_command(["--quick"], "python sweeps/nm_weight.py", "nm_weight")
    api._note_command(None, ["--quick"], "own_sweep")
    assert noted_command() is None
