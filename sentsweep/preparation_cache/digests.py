"""Digests of a preparation stage's inputs, for its key: a model by its files (a local folder) or its hub name and
revision, texts and pairs by their JSON, and a model in memory by its weights, modules and tokenizer."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from sentsweep.data import ScoredPairs
from sentsweep.preparation_cache.entries import Uncacheable, combined_digest, file_sha256


def source_digest(name_or_path: str) -> str:
    """A model (or file) source's identity: the digest of a local file's or folder's files, else the hub name with
    the revision of its snapshot in the local Hugging Face cache (`Uncacheable` when it has none: its content is
    unknown before it is downloaded)."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        path = path.resolve()
        files = [path] if path.is_file() else sorted(file for file in path.rglob("*") if file.is_file())
        return local_digest(str(path), tuple((str(file), file.stat().st_mtime_ns, file.stat().st_size)
                                             for file in files))
    return hub_snapshot(name_or_path)


@lru_cache(maxsize=None)
def local_digest(path: str, stamps: tuple) -> str:
    """The SHA-256 content digest of a local folder's files (their names and bytes, links followed, as in a Hugging
    Face snapshot; of a file: its bytes), as they are at `stamps` ((file, modification time, size) of each): the
    arguments are the cache key, so every trial of a process hashes a model of a gigabyte once, as
    `sentsweep.tracking.datasets` does a corpus."""
    root = Path(path)
    if root.is_file():
        return file_sha256(root)
    return combined_digest({Path(file).relative_to(root).as_posix(): file_sha256(Path(file)) for file, _, _ in stamps})


def hub_snapshot(name: str) -> str:
    """'<repository>@<commit>' of the snapshot a hub model loads from the local Hugging Face cache (sentence-
    transformers also tries its own organisation for a bare name)."""
    from huggingface_hub import try_to_load_from_cache

    for repository in (name,) if "/" in name else (name, f"sentence-transformers/{name}"):
        found = try_to_load_from_cache(repository, "config.json")
        if isinstance(found, str):
            return f"{repository}@{Path(found).parent.name}"
    raise Uncacheable(f"model {name!r} is no local folder and has no snapshot in the local Hugging Face cache")


def value_digest(value) -> str:
    """SHA-256 of a JSON value (texts, pairs of indices, scores): its canonical JSON, keys sorted."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def pairs_digest(pairs: ScoredPairs) -> str:
    """The digest of scored pairs' content (sentences and scores; where they were read from does not matter)."""
    return value_digest([pairs.sentences1, pairs.sentences2, [float(score) for score in pairs.scores]])


def module_digest(model) -> str:
    """SHA-256 of a model in memory as it encodes: its modules (their configuration, as printed), maximum sequence
    length, tokenizer (its full serialisation) and every weight (name, type, shape and bytes)."""
    import torch

    digest = hashlib.sha256(f"{model!r}\nmax_seq_length={getattr(model, 'max_seq_length', None)}\n".encode())
    tokenizer = getattr(model, "tokenizer", None)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    digest.update((backend.to_str() if backend is not None else repr(tokenizer)).encode())
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().to("cpu").contiguous()
        digest.update(f"\n{name} {data.dtype} {tuple(data.shape)}\n".encode())
        digest.update(data.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()
