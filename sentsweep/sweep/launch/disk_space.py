"""Room for what a sweep writes, checked before launch: folders that take files (`check_output_folders`), and
free disk, with a margin, for the checkpoints and models the card counts (`check_disk_space`, from `disk_needs`);
a folder that takes no file, or a disk without room, is an `InputError` naming it, before anything is built or
started.

What each file system must hold, how a checkpoint is counted (`CHECKPOINT_MODEL_COPIES` times the model's weights,
a bound tests/sweep/test_disk_space.py checks against real checkpoints) and the margin (`MARGIN`, `MARGIN_BYTES`):
docs/fault_tolerance.md, "Before launch".

    check_output_folders(options, storage_path)                  # a read-only --output-dir: InputError
    check_disk_space(definition, options, resolved, storage_path)  # too little room: InputError naming the need
"""

from __future__ import annotations

import itertools
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.storage import local_storage_folder, nearest_existing_folder, write_problem
from sentsweep.sweep.config.definition import ResolvedSweep, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.sweep.execution.models_kept import KeptModels
from sentsweep.sweep.launch.card import chained_from_each, stage_points
from sentsweep.tracking.sqlite_store import sqlite_store_path
from sentsweep.trainables.catalog import get_method

CHECKPOINT_MODEL_COPIES = 8  # a trial's checkpoint, in copies of its model's weights (docs/fault_tolerance.md)
MARGIN, MARGIN_BYTES = 1.2, 2**30
WEIGHT_FILES = ("*.safetensors", "*.bin")  # transformers' and sentence-transformers' weights
OTHER_FRAMEWORKS = {"onnx", "openvino"}  # folders of a hub snapshot that repeat the weights in another format


@dataclass(frozen=True)
class DiskNeed:
    """Bytes a sweep will keep under `folder`, and what they are."""

    folder: Path
    bytes: int
    what: str


def check_output_folders(options: SweepOptions, storage_path: str) -> None:
    """The output folder and a local storage path take new files; else an `InputError` naming the folder."""
    for option, folder in (("--output-dir", Path(options.output_dir)),
                           ("--storage-path", local_storage_folder(storage_path))):
        problem = folder is not None and write_problem(folder)
        if problem:
            raise InputError(f"{option} {folder}: {problem}")


def check_disk_space(definition: SweepDefinition, options: SweepOptions, resolved: ResolvedSweep,
                     stages: list[tuple[str, dict]], tracking_uri: str) -> None:
    """Each file system the sweep writes to has room for what it will keep there, with the margin; else an
    `InputError` naming the folder, what it needs and what is free."""
    by_device: dict[int, list[DiskNeed]] = {}
    for need in disk_needs(definition, options, resolved, stages, tracking_uri):
        by_device.setdefault(nearest_existing_folder(need.folder).stat().st_dev, []).append(need)
    for needs in by_device.values():
        total = sum(need.bytes for need in needs)
        required = math.ceil(total * MARGIN) + MARGIN_BYTES
        free = shutil.disk_usage(nearest_existing_folder(needs[0].folder)).free
        if free < required:
            parts = "; ".join(f"{need.folder}: {need.what}" for need in needs)
            raise InputError(f"not enough free disk for the sweep: it keeps about {_size(total)} ({parts}), "
                             f"{_size(required)} with the margin, and {_size(free)} are free there; free some, put "
                             "--storage-path / --output-dir on a larger disk, or run fewer trials")


def disk_needs(definition: SweepDefinition, options: SweepOptions, resolved: ResolvedSweep,
               stages: list[tuple[str, dict]], tracking_uri: str) -> list[DiskNeed]:
    """What the sweep keeps on local disk, per folder (see the module's docstring)."""
    weights = model_weight_bytes(resolved.constants.get("model"))
    seeds = len(resolved.seeds)
    per_stage, points = stage_points(resolved, stages, options, chained_from_each(definition))
    trials, kept, largest = 0, 0, 0
    policies = KeptModels(definition, options, tracking_uri, resolved.seeds)
    starts = [0, *itertools.accumulate(per_stage)]  # of each stage's points in stage_points' flat list
    for (name, _), count, start in zip(stages, per_stage, starts):
        training = seeds * sum(get_method(config["method"]).trains for config, _ in points[start:start + count])
        trials, largest = trials + training, max(largest, training)
        policy = policies.policy(name)
        kept += training if policy == "all" else min(seeds, training) if policy == "best" else 0
    checkpoint = CHECKPOINT_MODEL_COPIES * weights
    needs = []
    storage = local_storage_folder(resolved.storage_path)
    if storage is not None:
        keeps_models = resolved.constants.get("keep_model")
        model_folders = (largest + kept) * weights if keeps_models else 0
        each = f"about {_size(checkpoint)}" if weights else "a model not built yet (--quick's tiny one: in the margin)"
        needs.append(DiskNeed(storage, (trials + largest) * checkpoint + model_folders,
                              f"{trials} trials' checkpoints of {each} and {largest} more while its largest stage "
                              "runs" + (f", {_size(model_folders)} of model folders" if model_folders else "")))
    if kept and tracking_uri.startswith("sqlite:///"):
        needs.append(DiskNeed(sqlite_store_path(tracking_uri).parent, kept * weights,
                              f"{kept} kept models of {_size(weights)} in MLflow's artifacts"))
    if kept and any(stage.init_from for stage in definition.stages):
        needs.append(DiskNeed(Path(options.output_dir).absolute(), kept * weights,
                              f"{kept} kept models fetched back for the chained stages"))
    return needs


def model_weight_bytes(model: str | None) -> int:
    """The bytes of a local model folder's weights (safetensors, else PyTorch's .bin; not the copies of other
    frameworks a hub snapshot may hold); 0 for no local folder yet."""
    folder = Path(model) if model else None
    if folder is None or not folder.is_dir():
        return 0
    for pattern in WEIGHT_FILES:
        files = [path for path in folder.rglob(pattern)
                 if not OTHER_FRAMEWORKS & {part.lower() for part in path.relative_to(folder).parts[:-1]}]
        if files:
            return sum(path.stat().st_size for path in files)
    return 0


def _size(count: float) -> str:
    """`count` bytes in the unit that reads best (kB to GiB, binary)."""
    for unit in ("bytes", "KiB", "MiB"):
        if count < 1024:
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"
