"""The methods: their settings, their training, and the Ray Tune trainable that runs a trial of any of them.

- `catalog`: every method by name, and `train`, the Ray Tune trainable (a config dict -> a typed `Trial`).
- `settings`: the settings every trial shares (training loop, evaluation), `Trial` and `Method`.
- `loop`: the training loop every trained method shares; `session`: where it reports (Ray Tune or memory), with
  the trial process's `system_metrics` (CPU, memory, GPU) and the trial's `compute` (CPU, GPU and wall seconds
  over its attempts) attached to each report.
- `objectives` (each unsupervised objective, its settings and its loss) and `unsupervised` (their combinations);
  `supervised` (SBERT, Augmented SBERT) with its `teachers`; `gpl`; `lexical_baselines` (TF-IDF, BM25).
"""
