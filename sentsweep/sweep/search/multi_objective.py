"""The searcher of `--search optuna` with two objectives or more: Optuna's multi-objective TPE through Ray Tune's
`OptunaSearch`, each configuration run once per seed and told its mean over the seeds on every objective.

`OptunaSearch` takes a list of metrics and a list of modes and opens a study with one direction per objective;
the sampler is the sweep's TPE (`sentsweep.sweep.search.optuna_sampler`, the same seeded settings, which Optuna's
TPE applies to several objectives: its split of good and bad trials by non-dominated sorting and hypervolume
contribution). `MultiObjectiveSeedRepeater` is Ray Tune's `Repeater` for several objectives: it takes each
objective's value of every seed's trial (`sentsweep.sweep.search.objectives.objective_value`: a score from the
trial's last result, a compute total in hours, a setting from its config), tells the study the mean over the seeds
of each, and records on the Optuna trial, per objective label, the mean, its standard error and the seeds' values
(user attributes `seed_mean`, `seed_se`, `seed_n`, `seed_values`, each a mapping by label).

Ray Tune checks that every result holds the searcher's metrics, and a compute total in hours or a setting is not
a reported metric: so the repeater presents to Ray Tune the selection metric, which every trial reports, and keeps
the objectives to itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ray.tune.search import Repeater

from sentsweep.analysis.pareto import Objective
from sentsweep.sweep.search.objectives import objective_value
from sentsweep.sweep.search.seed_groups import mean_and_standard_error, optuna_trial, repeater_group


class MultiObjectiveSeedRepeater(Repeater):
    """`Repeater` that tells its searcher (an `OptunaSearch` over `objectives`' names) each objective's mean over a
    configuration's seeds; Ray Tune sees `selection_metric` as its metric (module docstring)."""

    def __init__(self, searcher, repeat: int, objectives: Sequence[Objective], selection_metric: str) -> None:
        super().__init__(searcher, repeat=repeat)
        self.objectives = list(objectives)
        self._metric, self._mode = selection_metric, "max"

    def on_trial_complete(self, trial_id: str, result: dict | None = None, **kwargs) -> None:
        group = repeater_group(self, trial_id)
        config = {**group.config, **((result or {}).get("config") or {})}
        group.report(trial_id, tuple(objective_value(objective, result or {}, config)
                                     for objective in self.objectives))
        if not group.finished_reporting():
            return
        by_seed = group.scores()
        statistics = {objective.label: mean_and_standard_error([values[index] for values in by_seed])
                      for index, objective in enumerate(self.objectives)}
        ot_trial = optuna_trial(self.searcher, group.primary_trial_id)
        if ot_trial is not None:
            ot_trial.set_user_attr("seed_mean", {label: mean for label, (mean, _, _) in statistics.items()})
            ot_trial.set_user_attr("seed_se", {label: se for label, (_, se, _) in statistics.items()})
            ot_trial.set_user_attr("seed_n", {label: n for label, (_, _, n) in statistics.items()})
            ot_trial.set_user_attr("seed_values", {objective.label: [float(values[index]) for values in by_seed]
                                                   for index, objective in enumerate(self.objectives)})
        means = {objective.name: statistics[objective.label][0] for objective in self.objectives}
        complete = all(math.isfinite(mean) for mean in means.values())
        self.searcher.on_trial_complete(group.primary_trial_id, result=means if complete else None, **kwargs)


def multi_objective_searcher(objectives: Sequence[Objective], sampler, seeds: int,
                             selection_metric: str) -> MultiObjectiveSeedRepeater:
    """The seeded `sampler` (TPE) over `objectives` in Ray Tune's `OptunaSearch`, each configuration repeated over
    `seeds` seeds."""
    from ray.tune.search.optuna import OptunaSearch  # lazy: optuna

    search = OptunaSearch(metric=[objective.name for objective in objectives],
                          mode=["max" if objective.maximize else "min" for objective in objectives], sampler=sampler)
    return MultiObjectiveSeedRepeater(search, seeds, objectives, selection_metric)
