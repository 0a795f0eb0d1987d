"""A sweep's configurations as an Optuna study: one completed trial per configuration whose value is its seed mean.

Each trial's params are the configuration's swept params, each with a distribution spanning the sweep's values (a
number: `FloatDistribution` from the least to the greatest value, logarithmic where every value is positive and they
span more than a factor of 10; a string: `CategoricalDistribution` of the values in sorted order). Its user
attributes are the standard error over seeds (`standard_error`, absent for one seed), the number of seeds (`n`),
each seed's value (`by_seed`, {seed: value}) and the configuration's `config_hash`; its start and completion times
are its first run's start and its last run's end (the export's time where the runs do not say). `to_journal` writes
such a study to an Optuna JournalStorage file, which `optuna-dashboard <file>` opens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from sentsweep.analysis.seed_means import ConfigurationMeans
from sentsweep.errors import InputError

LOG_SPAN = 10.0  # a positive numeric param whose values span more than this factor gets a logarithmic distribution


def distributions(configurations: Sequence[ConfigurationMeans], params: Sequence[str]) -> dict:
    """{param: Optuna distribution} over the values the configurations take (module docstring)."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution

    result = {}
    for name in params:
        values = [c.params[name] for c in configurations if name in c.params]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            low, high = float(min(values)), float(max(values))
            result[name] = FloatDistribution(low, high, log=low > 0 and high / low > LOG_SPAN)
        else:
            result[name] = CategoricalDistribution(sorted({str(v) for v in values}))
    return result


def completed_trials(configurations: Sequence[ConfigurationMeans], params: Sequence[str],
                     values: Sequence[float] | None = None) -> list:
    """One Optuna FrozenTrial per configuration (module docstring); `values` replaces the seed means (a resample)."""
    from optuna.trial import create_trial

    spaces = distributions(configurations, params)
    trials = []
    for index, configuration in enumerate(configurations):
        chosen = {name: _param_value(configuration.params[name], spaces[name]) for name in params
                  if name in configuration.params}
        attributes = {"n": configuration.n, "by_seed": configuration.by_seed,
                      "config_hash": configuration.config_hash}
        if not math.isnan(configuration.standard_error):
            attributes["standard_error"] = configuration.standard_error
        value = configuration.mean if values is None else float(values[index])
        trial = create_trial(params=chosen, distributions={name: spaces[name] for name in chosen}, value=value,
                             user_attrs=attributes)
        if configuration.start_time and configuration.end_time >= configuration.start_time:
            trial.datetime_start = datetime.fromtimestamp(configuration.start_time / 1000)
            trial.datetime_complete = datetime.fromtimestamp(configuration.end_time / 1000)
        trials.append(trial)
    return trials


def _param_value(value, distribution):
    from optuna.distributions import CategoricalDistribution

    return str(value) if isinstance(distribution, CategoricalDistribution) else float(value)


def in_memory_study(configurations: Sequence[ConfigurationMeans], params: Sequence[str], higher_is_better: bool,
                    values: Sequence[float] | None = None):
    """An in-memory Optuna study of the configurations (for the importance evaluators)."""
    import optuna

    study = optuna.create_study(direction="maximize" if higher_is_better else "minimize")
    study.add_trials(completed_trials(configurations, params, values))
    return study


def to_journal(configurations: Sequence[ConfigurationMeans], params: Sequence[str], path: str, study_name: str,
               metric: str, higher_is_better: bool) -> Path:
    """Write the configurations as the study `study_name` of a new JournalStorage file at `path`, the trials in
    the order their configurations started; the study's user attribute `metric` names what the values are. An
    existing file is refused (an InputError): an export never overwrites or adds to an earlier one."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    target = Path(path)
    if target.exists():
        raise InputError(f"{path} exists: an export writes a new journal file (remove it or choose another path)")
    if not target.parent.is_dir():
        raise InputError(f"no folder {str(target.parent)!r} to write {target.name} in")
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # the command prints what it wrote
    storage = JournalStorage(JournalFileBackend(str(target)))
    study = optuna.create_study(storage=storage, study_name=study_name,
                                direction="maximize" if higher_is_better else "minimize")
    study.set_user_attr("metric", metric)
    study.add_trials(completed_trials(configurations, params))
    return target
