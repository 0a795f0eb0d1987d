"""The cache's entries on disk: found by key, looked up under a lock, checked against their manifest, written
atomically (see the package's docstring for the layout)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from sentsweep.storage import local_storage_folder

Value = TypeVar("Value")
RESULT_KEY = "preparation_cache"  # a trial's report: {stage: {"key": ..., "status": ...}} of the entries it used
CONTENT = "content"
MANIFEST = "manifest.json"
VALUE_FILE = "value.json"
KEY_LENGTH = 32  # hex digits of the SHA-256 kept: 128 bits
TEMPORARY_MARK = ".tmp-"  # an entry being written or removed: .<key>.tmp-*


@dataclass(frozen=True)
class Stage:
    """A preparation step whose result is cached: its name (the entries' folder), its version (to be raised
    whenever what it computes changes, its code or the numbers of a library it relies on, so that older entries
    are no longer found), what it computes, and whether the trial's seed is part of its key (exactly when the
    step draws random numbers from it)."""

    name: str
    version: int
    computes: str
    seeded: bool


@dataclass(frozen=True)
class CacheUse:
    """How a trial used a stage's entry: its key ('' when not cached) and status: 'hit', 'computed',
    'recomputed' (the entry was corrupt) or 'not cached: <why>'."""

    key: str
    status: str


class CorruptEntryWarning(UserWarning):
    """A cache entry whose files do not match the digests of its manifest; it is recomputed, never used."""


class Uncacheable(Exception):
    """An input whose content cannot be pinned down (a hub model without a local snapshot): the stage is computed
    and not cached."""


def cache_folder(storage_path: str | None) -> str | None:
    """`<storage path>/cache`, where a sweep keeps its entries; None for a URI (s3://...), which has neither file
    locks nor atomic renames."""
    folder = local_storage_folder(storage_path)
    return None if folder is None else str(folder / "cache")


def save_json(value, folder: Path) -> None:
    """A JSON value's entry: value.json (floats are written exactly: json round-trips them bit for bit)."""
    (folder / VALUE_FILE).write_text(json.dumps(value), encoding="utf-8")


def load_json(folder: Path):
    return json.loads((folder / VALUE_FILE).read_text(encoding="utf-8"))


class PreparationCache:
    """One trial's view of the cache in folder `root` (None: off, every stage is computed), recording in `used` the
    entries the trial used."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = Path(root) if root else None
        self.used: dict[str, CacheUse] = {}

    def key(self, stage: Stage, inputs: Mapping[str, Any]) -> str:
        """The entry's key: SHA-256 of the stage's name, version and inputs (JSON, keys sorted). The inputs hold
        'seed' exactly when the stage is seeded."""
        if stage.seeded != ("seed" in inputs):
            raise ValueError(f"stage {stage.name!r} {'draws from' if stage.seeded else 'does not use'} the seed: its "
                             f"key's inputs must {'' if stage.seeded else 'not '}hold it")
        text = json.dumps({"stage": stage.name, "version": stage.version, "inputs": inputs}, sort_keys=True,
                          separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]

    def get_or_compute(self, stage: Stage, inputs: Callable[[], Mapping[str, Any]], compute: Callable[[], Value],
                       save: Callable[[Value, Path], None] = save_json,
                       load: Callable[[Path], Value] = load_json) -> Value:
        """`compute()`'s value: loaded from the stage's entry for `inputs()` when a sound one exists, else computed
        and left as that entry (`save(value, folder)` writes it into a folder, `load(folder)` reads it back). The
        lookup and the computation hold the entry's lock: trials that need the same missing entry compute it once,
        the others wait and load it. With the cache off, or an input that cannot be pinned down (`Uncacheable`),
        `compute()` alone is called."""
        if self.root is None:
            return compute()
        try:
            given = dict(inputs())
        except Uncacheable as reason:
            self.used[stage.name] = CacheUse("", f"not cached: {reason}")
            return compute()
        key = self.key(stage, given)
        folder = self.root / stage.name / key
        folder.parent.mkdir(parents=True, exist_ok=True)
        with locked(folder.parent / f"{key}.lock"):
            status = "computed"
            if folder.is_dir():
                problem = verify(folder)
                if problem is None:
                    mark_used(folder)
                    self.used[stage.name] = CacheUse(key, "hit")
                    return load(folder / CONTENT)
                warnings.warn(f"preparation cache entry {folder} does not match its digest ({problem}): it is "
                              "recomputed", CorruptEntryWarning, stacklevel=2)
                remove_entry(folder)
                status = "recomputed"
            started = time.perf_counter()
            value = compute()
            manifest = {"stage": stage.name, "version": stage.version, "key": key, "inputs": given,
                        "seconds": round(time.perf_counter() - started, 3)}
            publish(folder, lambda content: save(value, content), manifest)
            self.used[stage.name] = CacheUse(key, status)
            return value


@contextmanager
def locked(path: Path, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (filelock's `FileLock`: an `flock` of the file, created if need be;
    on NFS, Linux takes it as a lock of the whole file on the server). Without `wait`, `filelock.Timeout` when
    another process holds it. The lock goes with the process: a crashed holder leaves none behind."""
    with FileLock(path, timeout=-1 if wait else 0):
        yield


def publish(folder: Path, write: Callable[[Path], None], manifest: dict) -> None:
    """Write an entry into a temporary folder beside `folder` (`write(content folder)`, then the manifest with the
    digest of every file) and rename it into place: the entry is there whole or not at all. An entry another
    writer put there first is kept."""
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}{TEMPORARY_MARK}", dir=folder.parent))
    try:
        content = staging / CONTENT
        content.mkdir()
        write(content)
        files = file_digests(content)
        manifest = manifest | {"digest": combined_digest(files), "files": files, "created": time.time()}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        try:
            os.rename(staging, folder)
        except OSError:
            if not folder.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # nothing is left there once renamed


def verify(folder: Path) -> str | None:
    """What is wrong with an entry (None when its files are exactly those its manifest lists, with their
    digests): every file is hashed again, every time."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        expected, digest = dict(manifest["files"]), manifest["digest"]
    except (OSError, ValueError, KeyError, TypeError):
        return "no readable manifest"
    actual = file_digests(folder / CONTENT)
    changed = sorted(name for name in expected.keys() | actual.keys() if expected.get(name) != actual.get(name))
    if changed:
        return f"changed: {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}"
    if combined_digest(actual) != digest:
        return "its manifest's digest does not match its files"
    return None


def file_digests(folder: Path) -> dict[str, str]:
    """{path relative to `folder`: SHA-256 of the file's bytes} of every file under `folder` (none if absent)."""
    return {path.relative_to(folder).as_posix(): file_sha256(path) for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.is_symlink()}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def combined_digest(files: Mapping[str, str]) -> str:
    """The content digest of an entry: SHA-256 over its files' names and digests, in name order."""
    return hashlib.sha256("".join(f"{name}\0{files[name]}\n" for name in sorted(files)).encode()).hexdigest()


def mark_used(folder: Path) -> None:
    """Stamp the entry's manifest with the time of its last use, which `sentsweep cache prune` ages entries by."""
    try:
        os.utime(folder / MANIFEST)
    except OSError:  # a read-only cache is still usable
        pass


def remove_entry(folder: Path) -> None:
    """Delete an entry, first renamed out of the way so that no reader finds it half deleted."""
    doomed = Path(tempfile.mkdtemp(prefix=f".{folder.name}{TEMPORARY_MARK}", dir=folder.parent))
    os.rename(folder, doomed / "removed")
    shutil.rmtree(doomed, ignore_errors=True)
