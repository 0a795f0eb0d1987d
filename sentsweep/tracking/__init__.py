"""MLflow tracking of sweeps.

- `store`: where results go (the tracking URI, a reachability check, artifact names); no Ray, no MLflow import.
- `writer`: every MLflow access of a sweep: ordered, loss-free writes and bounded waiting reads that survive a
  lost server, and the replay of queued writes.
- `callback`: the Ray Tune callback that logs a sweep as one parent run and one child run per trial.
- `datasets`: a trial's data files as MLflow dataset inputs with content digests.
- `models`: a trial's selected model logged with MLflow's sentence-transformers flavour; model URIs checked and
  brought to a folder (chaining, export).
"""
