"""A content-addressed cache of the preparation stages of trials, so a sweep computes each one once per key.

The first trial that needs a stage's result (GPL's queries, negatives, cross-encoder and margins; Augmented
SBERT's teacher and silver labels; every method's step-0 evaluation) computes it under
`<storage path>/cache/<stage>/<key>/` and the others load it. The key digests the stage, its inputs' content, its
settings and the seed only where the stage draws from it, so a trial with the cache computes exactly what it
computes without it. Writes are atomic, concurrent trials compute an entry once (filelock), a corrupt entry is
recomputed with a `CorruptEntryWarning`, and each trial reports the entries it used under `RESULT_KEY`.

    cache = PreparationCache(training.preparation_cache)          # None: the cache off
    queries = cache.get_or_compute(stage, lambda: {"corpus": digest, "seed": seed}, generate_queries)

Keys, atomic writes, locks, corrupt entries and the run's tags: docs/cache.md, "How the cache keys, writes and
checks its entries"."""

from sentsweep.preparation_cache.entries import (
    RESULT_KEY,
    CacheUse,
    CorruptEntryWarning,
    PreparationCache,
    Stage,
    Uncacheable,
    cache_folder,
)

__all__ = ["RESULT_KEY", "CacheUse", "CorruptEntryWarning", "PreparationCache", "Stage", "Uncacheable",
           "cache_folder"]
