"""A content-addressed cache of the preparation stages of trials, so a sweep computes each one once per key.

A trial prepares before it trains: GPL generates queries, mines negatives, trains a cross-encoder and scores
margins; Augmented SBERT trains a teacher (after domain MLM) and has it label silver pairs; every trained method
scores its untrained model at step 0. Trials of one sweep that differ only in what comes after (a learning rate, a
batch size, a sampling strategy the teacher does not depend on) compute the same stages again. With the cache,
the first trial that needs a stage's result computes it and leaves it under the sweep's storage path, and the
others load it:

    <storage path>/cache/<stage>/<key>/manifest.json   what the entry is (stage, inputs, digest of its content)
    <storage path>/cache/<stage>/<key>/content/...     the result (JSON, a model folder)
    <storage path>/cache/<stage>/<key>.lock            taken (filelock) while the entry is looked up or written

- Key: SHA-256 of the stage's name and version and of its inputs: the content digest of every input (a local model
  folder's files, SHA-256 of each as `sentsweep.tracking.datasets` digests data files, which the trainables' layer
  cannot import; a hub model's name and locally cached revision; texts and pairs by the digest of their JSON; a
  model in memory by its weights), the settings the stage depends on, and the trial's seed only where
  the stage draws random numbers from it (`Stage.seeded`; `PreparationCache.key` refuses an input set that says
  otherwise). A stage that draws from the seed keeps it in its key because a cache must not change results: a
  trial with the cache computes exactly what it computes without it (only the hardware may differ: an entry
  computed on a GPU serves a trial on a CPU).
- Writes are atomic: an entry is written to a temporary folder beside it and renamed into place, so a crashed
  writer leaves no entry (only a `.<key>.tmp-*` folder, which `sentsweep cache prune` removes).
- Two trials that need the same missing entry at once compute it once: the second waits on the lock, then finds
  the entry. Should locks not work (a filesystem without them), both compute and the first rename wins.
- An entry whose files no longer match the digests in its manifest is never used: a `CorruptEntryWarning` names
  it, and it is recomputed and replaced.
- Each trial reports the entries it used under the result key `RESULT_KEY` ({stage: {"key", "status"}}, status
  hit, computed or recomputed), which the sweep's MLflow callback turns into the run's tags `cache.<stage>` (the
  key) and `cache.<stage>.status`.

`sentsweep cache list|prune --storage-path PATH` lists the entries and prunes them by age or all
(`sentsweep.preparation_cache.maintenance`); `--no-cache` on a sweep's command line turns the cache off.
"""

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
