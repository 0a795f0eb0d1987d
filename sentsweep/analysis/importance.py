"""Which swept params matter: Optuna's importance of each param over the configurations' seed means, with the
seeds' spread beside it (`sentsweep analyze importance`).

`param_importances(configurations, params, evaluator, ...)` computes each param's importance with one of Optuna's
evaluators (`EVALUATORS`: fANOVA, the default, or PED-ANOVA) on an in-memory study of one trial per configuration
whose value is its mean over seeds (`sentsweep.analysis.optuna_study`), unnormalised, and beside it the 95%
interval over seed resamples and the seed-noise level (`NOISE_QUANTILE`); `to_markdown` writes the table. Which
evaluator suits which sweep, and how the interval and the seed-noise level are drawn: docs/analysis.md (the
`importance` sub-command).

    configurations, params = configuration_means(runs, "sts_test_at_best_dev")  # sentsweep.analysis.seed_means
    ranked = param_importances(configurations, params, "fanova", resamples=100, random_seed=0)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sentsweep.analysis.optuna_study import in_memory_study
from sentsweep.analysis.seed_means import ConfigurationMeans
from sentsweep.errors import InputError

EVALUATORS = {
    "fanova": "fANOVA (Optuna's FanovaImportanceEvaluator, 16 trees, seed 0: the share of the variance of the means "
              "that a param's main effect explains)",
    "ped-anova": "PED-ANOVA (Optuna's PedAnovaImportanceEvaluator: the top 10% of configurations against all)",
}
FANOVA_TREES = 16  # the project's choice (Optuna's default is 64): each resample fits a forest
DEFAULT_RESAMPLES = 100
NOISE_QUANTILE = 95  # the seed-noise level is this percentile of the importances of means without any effect
MIN_CONFIGURATIONS = 3


@dataclass(frozen=True)
class ParamImportance:
    """One param's importance on the means, its interval over seed resamples and the seed-noise level."""

    param: str
    importance: float
    low: float
    high: float
    noise_level: float

    @property
    def within_seed_noise(self) -> bool:
        return self.importance <= self.noise_level


def make_evaluator(name: str):
    """The Optuna evaluator `name` of EVALUATORS; an InputError for another name."""
    from optuna.importance import FanovaImportanceEvaluator, PedAnovaImportanceEvaluator

    if name == "ped-anova":
        return PedAnovaImportanceEvaluator()
    if name == "fanova":
        return FanovaImportanceEvaluator(n_trees=FANOVA_TREES, seed=0)
    raise InputError(f"--evaluator must be one of {', '.join(EVALUATORS)}, got {name!r}")


def _importances(configurations, params, values, evaluator, higher_is_better) -> dict:
    import optuna

    study = in_memory_study(configurations, params, higher_is_better, values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `normalize` is experimental; PED-ANOVA's notes on small top sets
        found = optuna.importance.get_param_importances(study, evaluator=evaluator, params=list(params),
                                                        normalize=False)
    return {param: float(found.get(param, 0.0)) for param in params}


def param_importances(configurations: Sequence[ConfigurationMeans], params: Sequence[str], evaluator: str,
                      higher_is_better: bool = True, resamples: int = DEFAULT_RESAMPLES,
                      random_seed: int = 0) -> list[ParamImportance]:
    """Each of `params`' importance over the configurations' means with its seed interval and seed-noise level
    (docs/analysis.md), most important first. An InputError for fewer than MIN_CONFIGURATIONS configurations or
    fewer than 1 resample."""
    import optuna

    if len(configurations) < MIN_CONFIGURATIONS:
        raise InputError(f"importance needs at least {MIN_CONFIGURATIONS} configurations with a value, found "
                         f"{len(configurations)}")
    if resamples < 1:
        raise InputError(f"--resamples must be at least 1, got {resamples}")
    model = make_evaluator(evaluator)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    seeds = [np.array(list(c.by_seed.values()), dtype=float) for c in configurations]
    means = np.array([values.mean() for values in seeds])
    grand_mean = float(means.mean())
    rng = np.random.default_rng(random_seed)
    observed = _importances(configurations, params, means, model, higher_is_better)
    drawn, noise = [], []
    for _ in range(resamples):
        draws = [rng.choice(values, size=len(values)) for values in seeds]
        drawn.append(_importances(configurations, params, [d.mean() for d in draws], model, higher_is_better))
        deviations = [rng.choice(values - values.mean(), size=len(values)) for values in seeds]
        noise.append(_importances(configurations, params, [grand_mean + d.mean() for d in deviations], model,
                                  higher_is_better))
    result = []
    for param in params:
        spread = np.array([d[param] for d in drawn])
        level = float(np.percentile([n[param] for n in noise], NOISE_QUANTILE))
        result.append(ParamImportance(param, observed[param], float(np.percentile(spread, 2.5)),
                                      float(np.percentile(spread, 97.5)), level))
    return sorted(result, key=lambda item: -item.importance)


def to_markdown(importances: Sequence[ParamImportance], evaluator: str, metric: str, configurations: int,
                left_out: int, resamples: int) -> str:
    """The importance table with the method and the seeds' spread stated under it."""
    lines = [f"| param | importance | 95% interval over seed resamples | seed-noise level ({NOISE_QUANTILE}th "
             "percentile) | |", "|---|---|---|---|---|"]
    for item in importances:
        verdict = "within seed noise" if item.within_seed_noise else "above seed noise"
        lines.append(f"| {item.param} | {item.importance:.4g} | {item.low:.4g} – {item.high:.4g} | "
                     f"{item.noise_level:.4g} | {verdict} |")
    skipped = (f" ({left_out} left out: they do not set every param ranked)") if left_out else ""
    lines += ["", f"Method: {EVALUATORS[evaluator]}, unnormalised, over the means of {metric} of {configurations} "
              f"configurations{skipped}. Seeds' spread: {resamples} resamples of each configuration's seeds "
              f"(interval), and {resamples} of the means with no param effect (seed-noise level: an importance at "
              "or below it is within seed noise)."]
    return "\n".join(lines)
