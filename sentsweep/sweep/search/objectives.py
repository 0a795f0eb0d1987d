"""A sweep's objectives (`--objective NAME:max|min`, repeated): checked before anything runs, and each one's value
in a trial's result.

An objective names what the Pareto set of `sentsweep.analysis.pareto` reads from the trials' runs:

- a score the trials report: every trial's (`best_sts_dev`, `sts_test_at_best_dev`), its checkpoint rule's, a
  metric of an `--eval-task` task (`sentsweep.trainables.loop.reports_metric`);
- a compute total: `gpu_hours`, `cpu_hours`, `wall_hours` (the trial's `*_seconds` / 3600), or the seconds
  themselves and the loop's timings (`wall_seconds`, `seconds_per_step`: `sentsweep.trainables.compute`);
- a numeric setting of the trials, an inference cost such as `max_seq_length`: a number every trial sets, or an
  axis of numbers the sweep sweeps.

Two objectives or more (`sentsweep.analysis.pareto.check_objectives`). A sweep with objectives marks the Pareto
set under every stage's table; `--search optuna --sampler tpe` searches them together (Optuna's multi-objective
TPE: `sentsweep.sweep.search.multi_objective`). What cannot take them is refused here, each in one line: the
noise-aware GP (it models one objective), an early-stopping scheduler or a race (each stops configurations on the
selection metric alone, so their costs and scores would be those of unequal training).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from sentsweep.analysis.pareto import HOURS, Objective, check_objectives
from sentsweep.errors import InputError
from sentsweep.trainables.compute import COMPUTE_METRICS, TIMING_METRICS
from sentsweep.trainables.settings import EvaluationSettings

COMPUTE_NAMES = (*HOURS, *COMPUTE_METRICS, *TIMING_METRICS)


def sweep_objectives(texts: Sequence[str]) -> list[Objective]:
    """The sweep's objectives as given (none: []); an InputError for a malformed one, fewer than 2, or a name
    given twice."""
    return check_objectives(texts) if texts else []


def check_sweep_objectives(options, constants: Mapping, stages: Sequence[tuple[str, dict]]) -> list[Objective]:
    """The sweep's objectives, each one a value its trials have (module docstring) and in a search, scheduler and
    race that can take them; else an InputError naming the option and the value."""
    objectives = sweep_objectives(options.objective)
    if not objectives:
        return []
    labels = " ".join(f"--objective {objective.label}" for objective in objectives)
    if options.search == "optuna" and options.sampler in ("noise-gp", "rung-gp"):
        raise InputError(f"{labels} with --sampler {options.sampler}: the noise-aware GP models one objective; search "
                         "several with --sampler tpe (Optuna's multi-objective TPE)")
    if options.scheduler != "fifo":
        raise InputError(f"{labels} with --scheduler {options.scheduler}: the scheduler stops configurations on the "
                         "selection metric alone, so their costs would be of unequal training; leave one out")
    if options.race:
        raise InputError(f"{labels} with --race: the race drops configurations on the selection metric alone; "
                         "leave one out")
    for objective in objectives:
        if not known_objective(objective.name, constants, stages):
            raise InputError(f"--objective {objective.label!r}: the trials report no metric {objective.name!r} and "
                             f"set no numeric setting of that name (a score such as best_sts_dev, a compute total: "
                             f"{', '.join(COMPUTE_NAMES)}, or a numeric setting such as max_seq_length)")
    return objectives


def known_objective(name: str, constants: Mapping, stages: Sequence[tuple[str, dict]]) -> bool:
    """Whether every trial of the sweep has a value of `name` (module docstring)."""
    from sentsweep.trainables.loop import reports_metric  # lazy: torch

    if name in COMPUTE_NAMES or reports_metric(EvaluationSettings.from_config(constants), name):
        return True
    axes = [axes[name] for _, axes in stages if name in axes]
    if axes:
        return all(_numeric_axis(axis) for axis in axes)
    return _number(constants.get(name))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _numeric_axis(axis) -> bool:
    """A grid axis of numbers, or a sampled range of numbers (a Ray Tune Float or Integer domain)."""
    from ray.tune.search.sample import Float, Integer

    if isinstance(axis, list):
        return bool(axis) and all(_number(value) for value in axis)
    return isinstance(axis, (Float, Integer))


def objective_value(objective: Objective, result: Mapping, config: Mapping) -> float:
    """The objective's value of one trial: from its last result (`result`, Ray Tune's), a compute total in hours
    from its seconds, a setting from its `config`; nan where it has none."""
    name = objective.name
    if name in HOURS:
        seconds = result.get(HOURS[name].removeprefix("system/"))
        return float(seconds) / 3600 if _number(seconds) else math.nan
    value = result.get(name, config.get(name))
    return float(value) if _number(value) else math.nan


def objectives_text(objectives: Sequence[Objective]) -> str:
    """The objectives as the sweep's run records them and the card shows them: `best_sts_dev:max, gpu_hours:min`."""
    return ", ".join(objective.label for objective in objectives)


def objectives_row(objectives: Sequence[Objective], search: str) -> str:
    """The card's line on the objectives: what each stage's table marks, and what the search assumes."""
    searched = ("; --search optuna searches them together: Optuna's TPE with one direction per objective, told each "
                "configuration's mean over its seeds on every objective (sentsweep.sweep.search.multi_objective)"
                if search == "optuna" else "")
    return (f"| search, tables | --objective | {objectives_text(objectives)} | command line (every stage's table marks "
            "the Pareto set: a configuration is on it unless another is significantly better on one objective and not "
            f"worse on any, the tables' test and --correction over the seeds{searched}) |")
