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
    length, tokenizer (its full serialisation) and the weights its sentence embedding reads (name, type, shape and
    bytes of each; every buffer). A weight the embedding does not read is left out, so that models that differ
    only there share a key: a checkpoint loaded without its pooler layer gets a new one drawn from the seed, which
    mean or CLS pooling never reads (sentence-transformers pools the token embeddings)."""
    import torch

    digest = hashlib.sha256(f"{model!r}\nmax_seq_length={getattr(model, 'max_seq_length', None)}\n".encode())
    tokenizer = getattr(model, "tokenizer", None)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    digest.update((backend.to_str() if backend is not None else repr(tokenizer)).encode())
    unread = unread_weights(model)
    for name, tensor in sorted(model.state_dict().items()):
        if name in unread:
            continue
        data = tensor.detach().to("cpu").contiguous()
        digest.update(f"\n{name} {data.dtype} {tuple(data.shape)}\n".encode())
        digest.update(data.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def unread_weights(model) -> set[str]:
    """Names (as in `state_dict`) of the trainable weights that a sentence embedding does not depend on: those
    autograd finds no path to from the embedding of a probe sentence (in eval mode, so no dropout draws from the
    random number generator; the model's mode is restored). Empty for a model that is not a sentence-transformers
    model (no `tokenize`), and frozen weights are always kept (autograd does not follow them)."""
    import torch

    # sentence-transformers 6 renamed `tokenize` (deprecated there) to `preprocess`; the floor, 5.4, has only the first
    preprocess = getattr(model, "preprocess", None) or getattr(model, "tokenize", None)
    if preprocess is None:
        return set()
    named = [(name, weight) for name, weight in model.named_parameters() if weight.requires_grad]
    if not named:
        return set()
    training = model.training
    model.eval()
    try:
        features = preprocess(["a probe sentence"])
        device = named[0][1].device
        features = {key: value.to(device) if hasattr(value, "to") else value for key, value in features.items()}
        with torch.enable_grad():
            embedding = model(features)["sentence_embedding"]
            gradients = torch.autograd.grad(embedding.sum(), [weight for _, weight in named], allow_unused=True)
    finally:
        model.train(training)
    return {name for (name, _), gradient in zip(named, gradients) if gradient is None}
