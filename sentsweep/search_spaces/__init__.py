"""The search spaces: what each experiment sweeps, with its sources, and how it becomes a Ray Tune / Optuna space.

- One module per work, named as `sentsweep.references` names it: `tsdae`, `reiml_2023`, `wang_2022`,
  `malmberg_2021`, `tsdae_gpl_draft`; `combined` for the project's sweeps over several works and `shared` for the
  quick run's settings several of them use. Each holds its experiments' `Protocol`s: the fixed settings, the
  per-method settings, the grids and the seeds, every value `Sourced` (`cited(reference, "§ / Table", "quote")` or
  `project_choice("why")`). `python sweeps/<name>.py --dry-run` prints every axis with its values and sources.
- `protocol`: `Protocol` and `Sourced`, the data those modules declare.
- `param_spaces`: a sweep's axes as Ray Tune param spaces: a list is a grid (every value, crossed with every
  other axis), a Ray Tune domain (`tune.uniform(0.1, 0.9)`) is sampled by Optuna; the seeds are an axis of every
  grid and ride along with every sampled configuration; `--sample-sizes` and `--batch-sizes` add axes to any sweep
  (`added_axes`). Grids become `grid_param_space`, a grid's trials one by one `points_param_space` (`--extend`,
  races, schedulers), sampled ranges `sampled_param_space`.
- `ranges`: the Optuna ranges the experiments sample: deletion ratio and pooling (TSDAE), the weight w of a second
  objective (Noise Matching, multi-task), the learning rate.

An experiment (`sentsweep.experiments.<paper>.<name>`) takes its protocol from here and builds its stages' grids
from it (`Stage(name, axes)`) and its `sampled_axes` from `ranges`. Importing this package imports nothing;
the protocol modules import no Ray (`ranges` imports Ray Tune's domains when called, `param_spaces` when
imported), so `sentsweep list` and a sweep's `--help` load none.
"""
