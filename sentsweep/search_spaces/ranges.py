"""The Optuna ranges the experiments sample (`SweepDefinition.sampled_axes`, `--search optuna`): each a {param: Ray
Tune domain} that `sentsweep.search_spaces.param_spaces.sampled_param_space` crosses with the seeds. The bounds come
from each experiment's options (`--ratio-range`, `--weight-range`, `--lr-range`), whose defaults are the project's
choices (the seeds give grids, not ranges).

Ray Tune's domains are imported when a range is built, not with this module: `sentsweep list` and a sweep's --help,
which import the experiments, load no Ray.
"""

from __future__ import annotations


def deletion_pooling_ranges(low: float, high: float, poolings: list[str]) -> dict:
    """TSDAE's deletion ratio uniform in [low, high] and the pooling among `poolings`."""
    # lazy: ray
    from ray import tune

    return {"noise_ratio": tune.uniform(low, high), "pooling": tune.choice(list(poolings))}


def weight_ranges(low: float, high: float) -> dict:
    """The weight w of a second objective (L = L_first + w L_second) log-uniform in [low, high]."""
    # lazy: ray
    from ray import tune

    return {"w": tune.loguniform(low, high)}


def learning_rate_ranges(low: float, high: float) -> dict:
    """The learning rate log-uniform in [low, high]."""
    # lazy: ray
    from ray import tune

    return {"lr": tune.loguniform(low, high)}
