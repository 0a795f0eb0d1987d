"""A sweep's storage path (Ray Tune's, shared by every node) as a local folder, for what sweeps keep beside Ray
Tune's results: the preparation cache, the GPU probes.

Storage given as a URI (s3://..., gs://...) is no local folder: it has neither file locks nor atomic renames, so
nothing of sentsweep's own is kept there (`local_storage_folder` is None).
"""

from __future__ import annotations

from pathlib import Path


def local_storage_folder(storage_path: str | None) -> Path | None:
    """The storage path as an absolute local folder (~ expanded); None for a URI or no storage path."""
    if not storage_path or "://" in storage_path:
        return None
    return Path(storage_path).expanduser().resolve()
