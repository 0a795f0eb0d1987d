"""Running a sweep, in five sub-packages, each importing only those before it: `config` (what a sweep is: its
definition, protocol and typed options), `compute` (the cluster and its resources), `search` (each trial's config,
Optuna's sampler, seed groups, races), `execution` (the sweep's stages on Ray Tune with MLflow tracking) and `launch`
(the entry point, every check before launch, the protocol card of --dry-run)."""

from sentsweep.sweep.config.definition import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option
from sentsweep.sweep.launch.entry_point import run_sweep

__all__ = ["Stage", "SweepDefinition", "SweepOptions", "option", "run_sweep"]
