"""The search spaces: what a sweep searches over, and how it becomes a Ray Tune / Optuna param space.

- `param_spaces`: the generic machinery. A sweep's axes are a param name with its values: a list (a grid: every
  value, crossed with every other axis) or a Ray Tune domain (`tune.uniform(0.1, 0.9)`: sampled by Optuna); the
  seeds are an axis of every grid, and ride along with every sampled configuration (each configuration runs once
  per seed); `--sample-sizes` and `--batch-sizes` add axes to any sweep (`added_axes`). Grids become
  `grid_param_space`, the trials of a grid one by one `points_param_space` (`--extend`, races, schedulers),
  sampled ranges `sampled_param_space`.
- `ranges`: the Optuna ranges the experiments sample: deletion ratio and pooling (TSDAE), the weight w of a second
  objective (Noise Matching, multi-task), the learning rate.
- Each experiment's own spaces stay beside it, so that a paper's sweep is two files (`sweeps/<name>.py` and
  `sentsweep/experiments/<name>.py`): its stages' grids (`Stage(name, axes)`, their values from its protocol, each
  with its source) and its `sampled_axes`, which import their ranges from `ranges`. `python sweeps/<name>.py
  --dry-run` prints every axis with its values and their sources.

Importing this package imports nothing: `sentsweep list` and a sweep's `--help` load no Ray (`ranges` imports Ray
Tune's domains when called, `param_spaces` when imported).
"""
