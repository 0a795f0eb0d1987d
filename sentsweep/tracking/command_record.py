"""The command that started a sweep, on the sweep's run, so that `sentsweep rerun RUN_ID` starts it again.

- tag `sentsweep.command` (JSON): `argv` (the process's command line), `options_argv` (the options the sweep
  parsed), `entry_point` (how it was started: `python sweeps/nm_weight.py`, `sentsweep run nm_weight`), `script`
  (the sweep file's absolute path, where one ran), `experiment` (the definition's name) and `cwd` (the working
  folder the relative paths of the options are read from); every URI's credentials removed
  (`postgresql://user:***@host`, `sentsweep.tracking.store.redact`);
- artifact `command/options.json`: each option as its typed value ({name: {"type": ..., "value": ...}});
- tag `sentsweep.rerun_of`: on the run of a re-run, the run it re-ran.

`run_sweep` notes the command as it parses it (`note_command`), and `sentsweep.run` notes the command line of the
same sweep (`sentsweep run NAME ...`; a definition of one's own, which no command names, notes none); the sweep's
record writes it (`command_operations`).
`provenance_differences` names, one line each, where a run's recorded commit, dirty flag or locked packages differ
from another environment's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from sentsweep.tracking.store import redact

COMMAND_TAG = "sentsweep.command"
RERUN_OF_TAG = "sentsweep.rerun_of"
OPTIONS_ARTIFACT = "command/options.json"
RERUN_OF_VARIABLE = "SENTSWEEP_RERUN_OF"  # set by `sentsweep rerun` for the sweep it starts
COMPARED_TAGS = ("sentsweep.commit", "sentsweep.dirty")
PACKAGE_PREFIX = "package."

_noted: dict | None = None


def note_command(options_argv: list[str], entry_point: str, experiment: str, argv: list[str] | None = None) -> None:
    """Note the command of the sweep this process is starting (`run_sweep` calls it once the options parse): `argv`
    the command line that starts it (None: this process's own, whose sweep file, if any, is its script)."""
    global _noted
    script = sys.argv[0] if argv is None and sys.argv and sys.argv[0].endswith(".py") else ""
    _noted = {"argv": [redact(arg) for arg in (sys.argv if argv is None else argv)],
              "options_argv": [redact(arg) for arg in options_argv], "entry_point": redact(entry_point),
              "script": str(Path(script).resolve()) if script else "", "experiment": experiment, "cwd": os.getcwd()}


def forget_command() -> None:
    """No command noted: the next sweep's run records none (a definition of one's own started from Python)."""
    global _noted
    _noted = None


def noted_command() -> dict | None:
    return _noted


def options_json(options) -> str:
    """Each field of the options dataclass as {"type": its Python type's name, "value": the value as JSON}."""
    values = {}
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        value = list(value) if isinstance(value, tuple) else value
        if isinstance(value, str):
            value = redact(value)
        values[field.name] = {"type": type(getattr(options, field.name)).__name__,
                              "value": value if _is_json(value) else str(value)}
    return json.dumps(values, indent=1, default=str)


def _is_json(value) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def command_operations(options) -> list[dict]:
    """The writer operations that record the noted command, the typed options and, for a re-run, the run it
    re-runs, on the sweep's run (none for the command where no command was noted)."""
    operations = [{"op": "text", "trial": None, "file": OPTIONS_ARTIFACT, "content": options_json(options)}]
    if _noted is not None:
        operations.append({"op": "tag", "trial": None, "key": COMMAND_TAG, "value": json.dumps(_noted)})
    if os.environ.get(RERUN_OF_VARIABLE):
        operations.append({"op": "tag", "trial": None, "key": RERUN_OF_TAG, "value": os.environ[RERUN_OF_VARIABLE]})
    return operations


def provenance_differences(recorded: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """One line per provenance tag (commit, dirty flag, each locked package) whose recorded value differs from the
    current one."""
    names = [*COMPARED_TAGS, *sorted({key for key in [*recorded, *current] if key.startswith(PACKAGE_PREFIX)})]
    lines = []
    for name in names:
        old, new = recorded.get(name, "not recorded"), current.get(name, "not installed")
        if old != new:
            what = {"sentsweep.commit": "commit", "sentsweep.dirty": "dirty flag"}.get(
                name, f"package {name.removeprefix(PACKAGE_PREFIX)}")
            lines.append(f"{what} differs: the run recorded {old}, this re-run has {new}")
    return lines
