"""The searcher side of seeds: a sampled configuration runs once per seed, and the searcher learns from the
mean over its seeds together with that mean's standard error.

Ray Tune's `Repeater` runs each configuration its searcher suggests `repeat` times and tells the searcher only
the mean over the repeats. `SeedAveragingRepeater` tells it the same mean, under the metric's name, and also
`<metric>_se` (the standard error of that mean, std over seeds (ddof=1) / sqrt(n)), `<metric>_n` (seeds with a
value) and, for Optuna, records them on the Optuna trial as user attributes (`seed_mean`, `seed_se`, `seed_n`,
`seed_values`), so the study says how sure each of its values is. Optuna's samplers optimise the mean; the
standard error is there for whoever reads the study (and for a sampler that can use it).
"""

from __future__ import annotations

import math

import numpy as np
from ray.tune.search import Repeater


def mean_and_standard_error(scores: list) -> tuple[float, float, int]:
    """(mean, standard error of the mean, n) over the scores that are numbers; nan where undefined."""
    values = np.array([score for score in scores if score is not None and not math.isnan(score)], dtype=float)
    if not len(values):
        return float("nan"), float("nan"), 0
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")
    return float(values.mean()), se, len(values)


class SeedAveragingRepeater(Repeater):
    """`Repeater` that gives its searcher the mean over a configuration's seeds and its standard error."""

    def on_trial_complete(self, trial_id: str, result: dict | None = None, **kwargs) -> None:
        group = self._trial_id_to_group[trial_id]
        score = result.get(self.searcher.metric, np.nan) if result else np.nan
        group.report(trial_id, score)
        if not group.finished_reporting():
            return
        scores = group.scores()
        mean, se, n = mean_and_standard_error(scores)
        ot_trial = getattr(self.searcher, "_ot_trials", {}).get(group.primary_trial_id)
        if ot_trial is not None:  # OptunaSearch: the study keeps how sure each value is
            ot_trial.set_user_attr("seed_mean", mean)
            ot_trial.set_user_attr("seed_se", se)
            ot_trial.set_user_attr("seed_n", n)
            ot_trial.set_user_attr("seed_values", [float(score) for score in scores])
        metric = self.searcher.metric
        self.searcher.on_trial_complete(group.primary_trial_id,
                                        result={metric: mean, f"{metric}_se": se, f"{metric}_n": n}, **kwargs)
