"""A sweep's storage path (Ray Tune's, shared by every node) as a local folder, for what sweeps keep beside Ray
Tune's results: the preparation cache, the GPU probes.

Storage given as a URI (s3://..., gs://...) is no local folder: it has neither file locks nor atomic renames, so
nothing of sentsweep's own is kept there (`local_storage_folder` is None). Whether a local folder takes new files
is tried before a sweep writes there (`write_problem`).
"""

from __future__ import annotations

import os
from pathlib import Path


def local_storage_folder(storage_path: str | None) -> Path | None:
    """The storage path as an absolute local folder (~ expanded); None for a URI or no storage path."""
    if not storage_path or "://" in storage_path:
        return None
    return Path(storage_path).expanduser().resolve()


def nearest_existing_folder(path: Path) -> Path:
    """`path` if it exists, else the closest folder above it that does (where `path` would be made)."""
    path = Path(path).expanduser().absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def write_problem(folder: Path) -> str | None:
    """Why no file can be written in `folder` (made where it does not exist yet), if none can: a file where a folder
    must be, or a folder above it that takes no new file (a read-only file system, no permission: tried for real,
    with a file made and removed, since root passes every permission check but a read-only mount's)."""
    existing = nearest_existing_folder(folder)
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    probe = existing / f".sentsweep-write-check-{os.getpid()}"
    try:
        probe.touch()
    except OSError as error:
        return f"{existing} is not writable ({error.strerror})"
    probe.unlink(missing_ok=True)
    return None
