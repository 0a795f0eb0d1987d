"""What every task reader shares: checking a requested split, a task's folder and files, JSON files."""

from __future__ import annotations

import json
from pathlib import Path

from sentsweep.data import read_lines
from sentsweep.errors import InputError


def check_split(name: str, split: str, splits: tuple[str, ...]) -> None:
    if split not in splits:
        raise InputError(f"task {name!r} has no {split!r} split; it has {', '.join(splits)}")


def task_folder(name: str, path: str | Path, files: tuple[str, ...] = ()) -> Path:
    """`path` as a folder holding `files`; a missing folder or file is an `InputError` naming it."""
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(f"{name}: folder not found: {folder}")
    missing = [file for file in files if not (folder / file).is_file()]
    if missing:
        raise InputError(f"{name}: {folder} lacks {', '.join(missing)}")
    return folder


def read_json(path: Path):
    """A JSON file's content, or an `InputError` naming the file, line and problem."""
    text = "\n".join(read_lines(path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}, line {error.lineno}: not valid JSON ({error.msg})") from None
