"""Models named on the Hugging Face hub, resolved once on the driver, before anything is launched.

Compute nodes often have no internet (most SLURM clusters): a trial that loads `bert-base-uncased` from the hub
there spends a minute in the hub client's retries and dies with its tracebacks, once per trial. So the driver
fetches each hub model the sweep names into a cache every node reads, or finds it there, and the trials (and the
driver) load the snapshot's local folder, which never reaches for the hub; that folder, with the hub name and the
revision in its path, is the `model` each trial's MLflow run records. Where the model can be had neither way, the
sweep is refused at once, in one line naming the model, the reason and the fix.

The cache is `HF_HUB_CACHE` where set (the hub client's own setting: point it at ~/.cache/huggingface/hub to use
the models a machine has already), else the `hub/` folder of the sweep's Ray Tune storage, which every node of a
cluster shares (with cloud storage, s3://..., set HF_HUB_CACHE to a folder every node reads).
"""

from __future__ import annotations

import os
from pathlib import Path

from sentsweep.errors import InputError

# What a model's loading reads: configs, tokenizers, weights (safetensors, else PyTorch's), sentence-transformers'
# module folders (1_Pooling/config.json ...) and code of models that bring their own; not other frameworks' files.
MODEL_FILES = ["*.json", "*.txt", "*.model", "*.safetensors", "*.py"]
PYTORCH_WEIGHTS = ["*.bin"]
CONNECT_TIMEOUT_S = 10  # the hub client's wait for a reply, per request
FIX = ("give a local folder instead (--model /path/to/model), or fetch it where the hub is reachable into a cache "
       "this machine reads and set HF_HUB_CACHE to it with HF_HUB_OFFLINE=1")


def is_hub_name(source: str) -> bool:
    """A hub model name ("name" or "organisation/name") that is no existing local path; anything else names a
    path (`sentsweep.models.check_model_source` refuses one that does not exist)."""
    return not Path(source).expanduser().exists() and not source.startswith((".", "/", "~")) and source.count("/") <= 1


def hub_cache(storage_path: str) -> str | None:
    """Where the sweep keeps hub models: HF_HUB_CACHE, else the storage path's hub/ folder (None for cloud storage:
    the hub client's default cache)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if "://" in storage_path:
        return None
    return str(Path(storage_path, "hub").resolve())


def hub_model_folder(name: str, cache: str | None) -> str:
    """The local folder of hub model `name`'s snapshot in `cache` (None: the hub client's default), fetched there
    first where it is missing (unless HF_HUB_OFFLINE is set); an `InputError` naming the model, why and the fix."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    cached = cached_model_folder(name, cache)
    if cached is not None:
        return cached
    if hub_offline():
        raise InputError(f"model {name!r} is not in the hub cache {cache or '(the default one)'} and HF_HUB_OFFLINE "
                         f"is set; {FIX}")
    try:
        folder = snapshot_download(name, cache_dir=cache, allow_patterns=MODEL_FILES, etag_timeout=CONNECT_TIMEOUT_S)
        if not any(Path(folder).glob("*.safetensors")):  # an older repository: PyTorch's weights
            folder = snapshot_download(name, cache_dir=cache, allow_patterns=MODEL_FILES + PYTORCH_WEIGHTS,
                                       etag_timeout=CONNECT_TIMEOUT_S)
        return folder
    except (RepositoryNotFoundError, GatedRepoError) as error:
        raise InputError(f"model {name!r} is no model on the Hugging Face hub that can be read "
                         f"({type(error).__name__}); check its spelling, or give a local folder") from None
    except OSError as error:  # no connection: the hub client's errors are OSErrors
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"model {name!r} cannot be fetched: the Hugging Face hub is unreachable from this machine "
                         f"({reason}) and it is not in the hub cache {cache or '(the default one)'}; {FIX}") from None


def cached_model_folder(name: str, cache: str | None) -> str | None:
    """The local folder of hub model `name`'s snapshot where `cache` holds it (nothing is fetched), else None."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(name, cache_dir=cache, allow_patterns=MODEL_FILES, local_files_only=True)
    except (LocalEntryNotFoundError, FileNotFoundError):
        return None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
