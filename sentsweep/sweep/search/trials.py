"""Each trial's config as the runner hands it to Ray Tune, known before anything trains.

A stage's grid is crossed with the seeds; a method axis gives each trial its method's protocol settings
(`settings_by_method`, resolved by Ray Tune once the grid has fixed the method), a target-task axis its task's data
(`sentsweep.sweep.search.target_tasks.settings_by_task`). `trial_configs` lists the same
configs one by one, for the checks before launch and for the tests of what every trial runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from sentsweep.search_spaces.param_spaces import grid_points
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep.config.definition import ResolvedSweep
from sentsweep.sweep.search.target_tasks import settings_by_task
from sentsweep.trainables.catalog import setting_default


def settings_by_method(constants: dict, axes: dict, method_settings: dict[str, dict]) -> dict[str, dict]:
    """{setting: {method: value}} for the settings a method axis decides: each method's own protocol value,
    else the sweep's fixed value, else the setting's default."""
    if "method" not in axes or not isinstance(axes["method"], list):
        return {}
    methods = axes["method"]
    names = {name for method in methods for name in method_settings.get(method, {}) if name not in axes}

    def value(method: str, name: str):  # the fallback only for a method without its own value
        own = method_settings.get(method, {})
        return own[name] if name in own else constants[name] if name in constants else setting_default(name)

    return {name: {method: value(method, name) for method in methods} for name in sorted(names)}


def stage_constants(constants: dict, axes: dict, method_settings: dict[str, dict]) -> dict:
    """The settings every trial of a stage shares: without a method axis, its one method's own protocol settings
    over the sweep's (with one, each trial gets its method's from `settings_by_method`)."""
    return constants if "method" in axes else with_method_settings(constants, method_settings, axes)


def trial_configs(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> Iterator[tuple[str, dict]]:
    """(stage name, config) of every trial of grid stages, in the runner's order (a chained stage's starting
    model, known only once its earlier stage has run, is left out)."""
    for name, axes in stages:
        constants = stage_constants(resolved.constants, axes, resolved.method_settings)
        by_method = settings_by_method(constants, axes, resolved.method_settings)
        for point in grid_points(axes, resolved.seeds, by_method, settings_by_task(resolved.task_data, axes)):
            yield name, constants | point
