"""`sentsweep cache`: list the preparation cache of a sweep's storage path, or prune it by age or all.

    sentsweep cache list --storage-path sweep_outputs/ray
    sentsweep cache prune --storage-path /nfs/sweeps --older-than 30     # entries unused for 30 days
    sentsweep cache prune --storage-path /nfs/sweeps --all

Only what the cache itself writes is touched, and only inside `<storage path>/cache`: entry folders
(`<stage>/<key>`), the temporary folders of writers (`<stage>/.<key>.tmp-*`; a crashed writer's stay until
pruned) and lock files (`<stage>/<key>.lock`). Links are never followed, other files are left alone, and an entry
whose lock a trial holds is skipped. An entry's age is the time since its last use (written or loaded). A trial
may read an entry's folder again after looking it up (AugSBERT's domain MLM checkpoint, which the bi-encoder
starts from), so prune --all between sweeps, or by an age longer than a running sweep's trials.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import Timeout

from sentsweep.preparation_cache.entries import MANIFEST, TEMPORARY_MARK, cache_folder, locked, remove_entry
from sentsweep.terminal import HelpFormatter

KEY = re.compile(r"[0-9a-f]{32}")
TEMPORARY = re.compile(rf"\.(?P<key>[0-9a-f]{{32}}){re.escape(TEMPORARY_MARK)}.+")
LOCK = re.compile(r"(?P<key>[0-9a-f]{32})\.lock")
DAY_S = 86_400.0


@dataclass(frozen=True)
class Entry:
    """An entry folder of the cache, or a writer's temporary folder (`complete` False)."""

    stage: str
    key: str
    path: Path
    complete: bool
    size_bytes: int
    last_used: float  # seconds since the epoch


def find_entries(root: Path) -> list[Entry]:
    """Every entry and temporary folder under the cache folder `root`, stage by stage, in name order."""
    entries = []
    for stage in _folders(root):
        for child in _folders(stage):
            temporary = TEMPORARY.fullmatch(child.name)
            if not (KEY.fullmatch(child.name) or temporary):
                continue
            manifest = child / MANIFEST
            stamped = manifest if manifest.is_file() else child
            entries.append(Entry(stage.name, temporary["key"] if temporary else child.name, child,
                                 complete=not temporary, size_bytes=_size(child),
                                 last_used=stamped.stat().st_mtime))
    return entries


def prune(root: Path, older_than_s: float | None = None) -> tuple[list[Entry], list[Entry]]:
    """Remove the entries (and temporary folders) unused for more than `older_than_s` seconds, or all with None,
    then the lock files and stage folders left without entries. Returns (removed, skipped as in use)."""
    removed, busy = [], []
    now = time.time()
    for entry in find_entries(root):
        if older_than_s is not None and now - entry.last_used <= older_than_s:
            continue
        try:
            with locked(entry.path.parent / f"{entry.key}.lock", wait=False):
                remove_entry(entry.path) if entry.complete else shutil.rmtree(entry.path)
        except Timeout:
            busy.append(entry)
            continue
        removed.append(entry)
    for stage in _folders(root):
        for lock in stage.iterdir():
            match = LOCK.fullmatch(lock.name)
            if match and lock.is_file() and not lock.is_symlink() and not _has_entry(stage, match["key"]):
                try:
                    with locked(lock, wait=False):
                        lock.unlink()
                except Timeout:
                    pass
        try:
            stage.rmdir()  # only if empty
        except OSError:
            pass
    return removed, busy


def _folders(parent: Path) -> list[Path]:
    """The real folders (no links) in `parent`, by name."""
    if not parent.is_dir():
        return []
    return sorted(child for child in parent.iterdir() if child.is_dir() and not child.is_symlink())


def _has_entry(stage: Path, key: str) -> bool:
    return (stage / key).exists() or any(TEMPORARY.fullmatch(child.name) and child.name[1:].startswith(key)
                                         for child in stage.iterdir())


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _age(seconds: float) -> str:
    return f"{seconds / DAY_S:.1f} days" if seconds >= DAY_S else f"{seconds / 3600:.1f} hours"


def main(argv=None, prog: str = "sentsweep cache") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("list", "list the entries"), ("prune", "remove entries by age, or all")):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--storage-path", default=os.environ.get("SENTSWEEP_STORAGE_PATH"),
                             help="the sweeps' --storage-path (default: SENTSWEEP_STORAGE_PATH; a sweep's own default "
                             "is OUTPUT_DIR/ray, sweep_outputs/ray)")
        if name == "prune":
            which = command.add_mutually_exclusive_group(required=True)
            which.add_argument("--older-than", type=float, metavar="DAYS", help="entries unused for more than DAYS")
            which.add_argument("--all", action="store_true", help="every entry")
    args = parser.parse_args(argv)
    root = cache_folder(args.storage_path)
    if root is None:
        print(f"error: {'give --storage-path' if not args.storage_path else args.storage_path + ' is a URI'}: the "
              "cache lives in a folder of a (shared) filesystem", file=sys.stderr)
        return 2
    root = Path(root)
    if args.command == "list":
        entries = find_entries(root)
        now = time.time()
        for entry in entries:
            state = "" if entry.complete else "  (incomplete: a writer's temporary folder)"
            print(f"{entry.stage:28} {entry.key}  {_megabytes(entry.size_bytes):>12}  unused for "
                  f"{_age(now - entry.last_used)}{state}")
        print(f"{len(entries)} entries, {_megabytes(sum(entry.size_bytes for entry in entries))} in {root}")
        return 0
    if args.older_than is not None and args.older_than < 0:
        print(f"error: --older-than {args.older_than} must be >= 0 days", file=sys.stderr)
        return 2
    removed, busy = prune(root, None if args.all else args.older_than * DAY_S)
    print(f"removed {len(removed)} entries ({_megabytes(sum(entry.size_bytes for entry in removed))}) from {root}"
          + (f"; {len(busy)} in use, kept" if busy else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
