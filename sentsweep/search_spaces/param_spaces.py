"""Turn sweep axes into Ray Tune param spaces: an exact grid, or Optuna-sampled ranges; both times seeds.

An axis is a param name with its values: a list (grid mode: every value, crossed with every other axis) or
a Ray Tune domain such as `tune.uniform(0.1, 0.9)` (Optuna mode: sampled by `OptunaSearch`). A sweep that runs
only some trials of its grid (`--extend` leaves out those already finished) lists them as points. Any sweep can add
the axes `sample_size` and `batch_size` to its own (`added_axes`: --sample-sizes, --batch-sizes).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from sentsweep.trainables.settings import TASK_AXIS

if TYPE_CHECKING:
    from ray.tune.search.sample import Domain


def grid_param_space(constants: dict, axes: dict[str, list], seeds: list[int],
                     by_method: dict[str, dict] | None = None, by_task: dict[str, dict] | None = None) -> dict:
    """Every combination of the axes' values, each run once per seed. `by_method` {setting: {method: value}}:
    settings whose value follows the trial's method (each method with its own paper's settings), resolved
    by Ray Tune once the grid has fixed the method; `by_task` {setting: {task: value}} likewise those that follow
    its `target_task` (each task's own data, `sentsweep.sweep.search.target_tasks`)."""
    from ray import tune  # lazy: ray

    space = dict(constants)
    space.update({name: tune.grid_search(list(values)) for name, values in axes.items()})
    for key, settings in (("method", by_method), (TASK_AXIS, by_task)):
        for name, values in (settings or {}).items():
            space[name] = tune.sample_from(lambda config, values=values, key=key: values[config[key]])
    space["seed"] = tune.grid_search(list(seeds))
    return space


POINT_KEY = "__point__"  # config key: which of a points param space's trials this one is (bookkeeping)


def grid_points(axes: dict[str, list], seeds: list[int], by_method: dict[str, dict] | None = None,
                by_task: dict[str, dict] | None = None) -> list[dict]:
    """The trials of `grid_param_space` one by one: {axis: value, setting decided by the method or the target
    task: value, seed}."""
    names = list(axes)
    points = []
    for values in itertools.product(*(list(axes[name]) for name in names)):
        point = dict(zip(names, values))
        point.update({name: by[point["method"]] for name, by in (by_method or {}).items()})
        point.update({name: by[point[TASK_AXIS]] for name, by in (by_task or {}).items()})
        points += [point | {"seed": seed} for seed in seeds]
    return points


def points_param_space(constants: dict, points: list[dict]) -> dict:
    """Exactly the trials `points` (each the values it sets beyond `constants`), one Ray Tune trial each."""
    from ray import tune  # lazy: ray

    space = dict(constants)
    space[POINT_KEY] = tune.grid_search(list(range(len(points))))
    for name in sorted({name for point in points for name in point}):
        space[name] = tune.sample_from(
            lambda config, name=name: points[config[POINT_KEY]].get(name, constants.get(name)))
    return space


def sampled_param_space(constants: dict, domains: dict[str, Domain], seeds: list[int]) -> dict:
    """Constants and sampled domains; the seeds ride along and `Repeater` picks one per repeat."""
    space = dict(constants)
    space.update(domains)
    space["seeds"] = list(seeds)
    return space


def added_axes(sample_sizes, batch_sizes) -> dict[str, list]:
    """The axes any sweep can add to its own: training corpus sizes (--sample-sizes) and batch sizes
    (--batch-sizes), where given."""
    return {name: list(values) for name, values in (("sample_size", sample_sizes), ("batch_size", batch_sizes))
            if values}


def values_to_validate(axis) -> list:
    """The values of an axis worth checking before launch: all of a list or a choice, the bounds of a range.
    Ray Tune's domains are told by their attributes (a choice's `categories`, a range's `lower` and `upper`), so
    that checking a grid's lists imports no Ray."""
    if hasattr(axis, "categories"):  # tune.choice
        return list(axis.categories)
    if hasattr(axis, "lower") and hasattr(axis, "upper"):  # tune.uniform, tune.loguniform, tune.randint
        return [axis.lower, axis.upper]
    return list(axis)
