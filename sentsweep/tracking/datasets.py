"""A trial's data files as MLflow datasets, with content digests, so a run shows what it trained and was scored on.

Each data setting of a trial config becomes an `mlflow.entities.Dataset` with the context it plays
(`DATA_FILE_CONTEXTS`; every `eval_tasks` folder is "evaluation"). A local file's digest is the sha256 of its
bytes, a local folder's that of its files' names and digests in sorted order, so a changed file gives a new
digest and MLflow tells the runs of two versions of a corpus apart. A value that is no local path is a
Hugging Face hub name (the launcher's convention), recorded by name.

Files are hashed once per process (cached by path, modification time and size): every trial of a sweep
names the same corpus, which may be a gigabyte.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from mlflow.entities import Dataset
from mlflow.utils.validation import MAX_DATASET_DIGEST_SIZE

from sentsweep.tracking.configurations import address
from sentsweep.trainables.resolved_settings import NOT_READ

# Config key -> the MLflow input context (tag mlflow.data.context) of the file it names.
DATA_FILE_CONTEXTS = {
    "corpus": "training",
    "train_file": "training",
    "topic_corpus": "training",
    "reannotate_file": "training",
    "dev_file": "dev",
    "teacher_dev_file": "dev",
    "test_file": "test",
}
EVAL_TASK_CONTEXT = "evaluation"
CHUNK_BYTES = 1 << 20


def trial_datasets(config: dict) -> list[tuple[Dataset, str]]:
    """The datasets a trial config names, each with its context. MLflow keeps one input per name and digest, so
    one source playing several roles (SICK's one file for dev and test) is one dataset listing every context."""
    named = [(value, context, None) for key, context in DATA_FILE_CONTEXTS.items() if (value := config.get(key))]
    named += [(value, EVAL_TASK_CONTEXT, task) for task, value in (config.get("eval_tasks") or {}).items()]
    grouped: dict[tuple[str, str], tuple[Dataset, list[str]]] = {}
    for value, context, name in named:
        dataset = data_source(str(value), name)
        _, roles = grouped.setdefault((dataset.name, dataset.digest), (dataset, []))
        if context not in roles:
            roles.append(context)
    return [(dataset, ",".join(roles)) for dataset, roles in grouped.values()]


class DatasetInputs:
    """A sweep's dataset inputs, as `writer` operations: each trial's data files (`trial_datasets`) on its run, its
    configuration's and the sweep's; those of a configuration and of the sweep once per driver for the same inputs,
    not once per trial (MLflow keeps an input once however often it is logged).

        inputs = DatasetInputs(writer)
        inputs.trial_read("5036c_00000", config_hash, {"corpus": "data/corpus.txt", "seed": 0})
    """

    def __init__(self, writer) -> None:
        self.writer = writer
        self._logged: set[tuple[str, str]] = set()  # (config hash, "" for the sweep; the inputs as JSON)

    def trial_read(self, trial_id: str, config_hash: str, params: dict) -> None:
        """The inputs of trial `trial_id` of configuration `config_hash`: the data settings among `params` (its
        config as it starts, or the settings a trainer script reports it used), but a setting the trainer script
        never read (`NOT_READ`)."""
        datasets = trial_datasets({name: value for name, value in params.items() if value != NOT_READ})
        if not datasets:
            return
        inputs = [{"dataset": dataset.to_dictionary(), "context": context} for dataset, context in datasets]
        self.writer.submit({"op": "inputs", "trial": trial_id, "datasets": inputs})
        text = json.dumps(inputs, sort_keys=True)
        for run, key in ((address(config_hash), config_hash), (None, "")):
            if (key, text) not in self._logged:
                self._logged.add((key, text))
                self.writer.submit({"op": "inputs", "trial": run, "datasets": inputs})


def data_source(value: str, name: str | None = None) -> Dataset:
    """`value` (a local file or folder, or a hub name) as an MLflow dataset named `name` (default: its file
    name, or the hub name)."""
    path = Path(value)
    if path.exists():
        path = path.resolve()
        return Dataset(name or path.name, content_digest(path), "local", json.dumps({"uri": str(path)}))
    return Dataset(name or value, _truncated(hashlib.sha256(value.encode())), "hugging_face",
                   json.dumps({"path": value}))


def content_digest(path: Path) -> str:
    """sha256 of a file's bytes, or of a folder's files (relative names and digests, sorted), as long as
    MLflow's digest field allows."""
    if path.is_file():
        return _file_digest(str(path), *_stamp(path))
    folder_hash = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = file.relative_to(path).as_posix()
        folder_hash.update(f"{relative}\0{_file_digest(str(file), *_stamp(file))}\n".encode())
    return _truncated(folder_hash)


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_mtime_ns, status.st_size


@lru_cache(maxsize=None)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """The digest of a file as it is at (`mtime_ns`, `size`): the arguments are the cache key."""
    file_hash = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            file_hash.update(chunk)
    return _truncated(file_hash)


def _truncated(content_hash) -> str:
    return content_hash.hexdigest()[:MAX_DATASET_DIGEST_SIZE]

