"""The GPU probes that launches measured, kept in the sweep's storage path for the protocol card's estimate.

A launch on GPUs probes each distinct `ProbeKey` of its trials (`sentsweep.sweep.compute.gpu_packing`): peak memory and
step time on one whole GPU. Those measurements outlive the launch in `<storage path>/gpu_probes.json`
(`PROBES_FILE`), a JSON list with one entry per (key, GPU name): the key's five settings, the GPU's name, the
probe's peak bytes, the GPU memory the trials could have, its seconds per step (null where it ran out of memory),
whether it ran out of memory, and when it was measured (UTC, ISO 8601). A launch adds its probes to the entries
already there, each as it is measured (a later probe of the same key on the same GPU replaces the earlier one:
the newest measurement of the same thing; every other entry is kept), written to a temporary file and renamed
into place, so that a launch stopped mid-write leaves the file as it was. A `--dry-run` reads the file
(`read_probes`) to estimate the sweep's GPU-hours (`sentsweep.sweep.compute.gpu_estimate`). Storage given as a URI
(s3://...) keeps no file, as the preparation cache keeps no entries there. A file that cannot be read as such a
list is an `InputError` naming it, before any probe runs.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.storage import local_storage_folder
from sentsweep.sweep.compute.gpu_packing import Probe, ProbeKey

PROBES_FILE = "gpu_probes.json"
FIELD_TYPES = {"model": str, "method": str, "batch_size": int, "max_seq_length": int, "precision": str,
               "gpu_name": str, "peak_bytes": int, "gpu_memory_bytes": int,
               "seconds_per_step": (float, int, type(None)), "out_of_memory": bool, "measured_at": str}


@dataclass(frozen=True)
class StoredProbe:
    """One probe as the file keeps it: what was probed, what it measured, when (UTC, ISO 8601)."""

    key: ProbeKey
    probe: Probe
    measured_at: str

    def as_entry(self) -> dict:
        return asdict(self.key) | asdict(self.probe) | {"measured_at": self.measured_at}


def probes_file(storage_path: str) -> Path | None:
    """`<storage path>/gpu_probes.json`; None for a URI (s3://...)."""
    folder = local_storage_folder(storage_path)
    return None if folder is None else folder / PROBES_FILE


def read_probes(path: Path) -> list[StoredProbe]:
    """The probes the file keeps, none where it does not exist; an `InputError` naming it where it is malformed."""
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _malformed(path, str(error)) from None
    if not isinstance(entries, list):
        raise _malformed(path, f"a JSON list of probes expected, found {type(entries).__name__}")
    return [_stored_probe(path, index, entry) for index, entry in enumerate(entries)]


def _stored_probe(path: Path, index: int, entry) -> StoredProbe:
    if not isinstance(entry, dict) or set(entry) != set(FIELD_TYPES):
        raise _malformed(path, f"entry {index} is not an object with exactly the fields {', '.join(FIELD_TYPES)}")
    for name, kind in FIELD_TYPES.items():
        value = entry[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise _malformed(path, f"entry {index}: {name} {value!r} is no {_kind_name(kind)}")
    key = ProbeKey(**{field.name: entry[field.name] for field in fields(ProbeKey)})
    probe = Probe(**{field.name: entry[field.name] for field in fields(Probe)})
    return StoredProbe(key, probe, entry["measured_at"])


def _kind_name(kind) -> str:
    return "number or null" if isinstance(kind, tuple) else {str: "string", int: "integer", bool: "boolean"}[kind]


def _malformed(path: Path, reason: str) -> InputError:
    return InputError(f"{path}: not a GPU probes file that sentsweep wrote ({reason}); remove it, and the next "
                      "launch on a GPU measures again")


def keep_probes(path: Path, new: list[StoredProbe]) -> None:
    """Add `new` to the file's probes (see the module docstring): each replaces the entry of its key on its GPU."""
    kept = {(stored.key, stored.probe.gpu_name): stored for stored in read_probes(path)}
    kept |= {(stored.key, stored.probe.gpu_name): stored for stored in new}
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{PROBES_FILE}.", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump([stored.as_entry() for stored in kept.values()], file, indent=1)
    os.replace(temporary, path)


def recording(measure: Callable[[ProbeKey, dict], Probe | None], path: Path | None,
              now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
              ) -> Callable[[ProbeKey, dict], Probe | None]:
    """`measure` that also keeps each probe it measures in the file at `path` (None: keeps nothing); the file is
    read before each probe, so that a malformed one is refused before the probe runs (a sweep that probes nothing,
    on CPUs, never reads it)."""
    if path is None:
        return measure

    def measure_and_keep(key: ProbeKey, config: dict) -> Probe | None:
        read_probes(path)
        probe = measure(key, config)
        if probe is not None:
            keep_probes(path, [StoredProbe(key, probe, now().isoformat(timespec="seconds"))])
        return probe

    return measure_and_keep
