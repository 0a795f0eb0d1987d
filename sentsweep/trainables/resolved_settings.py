"""Every setting a trial resolved to, as flat MLflow params: each field of each settings group of its `Trial`,
default or not, so that two runs whose defaults differ differ in their params.

The groups are the evaluation's and checkpoint selection's (`EvaluationSettings`), the shared loop's
(`TrainingSettings`), the method's own (a built-in method's, a sentence-transformers loss's constructor arguments
and input kind, a user objective's or trainer script's settings class) and each objective's of an unsupervised
method. A param's key is the config key its value is read from (`noise_ratio`, `lr`), as a sweep's axes, `--set`
and the tables name it; where two groups of one trial hold one name with different values, the later group's is
`<group>.<name>` (`nm.temperature`). Left out:

- a trainer script's `TrainingSettings` (`Method.own_trainer`): what its trainer really used is reported by the
  trial itself (`sentsweep.trainables.trainer_script`), never the protocol's value the script may have ignored;
- `w` of a method of one objective (none: it has no second objective to weigh).

`param_text` writes a value as MLflow stores it; a value longer than MLflow's limit is cut there, and the whole
config is the run's `config.json` artifact.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from sentsweep.errors import InputError
from sentsweep.settings import Settings
from sentsweep.trainables.catalog import get_method, resolve_trial
from sentsweep.trainables.settings import Method, TrainingSettings, Trial

# MLflow's longest param value (mlflow.utils.validation.MAX_PARAM_VAL_LENGTH); kept here so that a trial's worker
# needs no MLflow import
MAX_PARAM_LENGTH = 6000
# The value a trainer script reports for a setting of `run.training` it never read: no setting it used, no data it read
NOT_READ = "not read by the trainer script"
CUT_MARK = " ... (cut at MLflow's param length; the whole value is in the run's config.json)"


def settings_groups_of(trial: Trial, method: Method) -> list[tuple[str, Settings]]:
    """(label, settings object) of every group the trial resolved to, the shared ones first."""
    groups = [("evaluation", trial.evaluation)]
    if trial.training is not None and not method.own_trainer:
        groups.append(("training", trial.training))
    groups.append(("method", trial.settings))
    return groups + list(trial.objectives.items())


def resolved_settings(trial: Trial, method: Method | None = None) -> dict[str, Any]:
    """{key: value} of every field of every group of `trial` (see the module docstring)."""
    method = method or get_method(trial.method)
    values: dict[str, Any] = {}
    for label, group in settings_groups_of(trial, method):
        for field in dataclasses.fields(group):
            value = getattr(group, field.name)
            if field.name == "w" and value is None and len(trial.objectives) < 2:
                continue
            key = field.name if field.name not in values or values[field.name] == value else f"{label}.{field.name}"
            values[key] = value
    return values


def reported_by_trial(config: Mapping) -> set[str]:
    """The settings of the trial `config` that the trial itself reports (a trainer script's training settings), so
    that no other value of them is logged first."""
    try:
        method = get_method(config.get("method"))
    except InputError:
        return set()
    return set(TrainingSettings.field_names()) if method.own_trainer else set()


def config_settings(config: Mapping) -> dict[str, Any]:
    """`resolved_settings` of the trial `config` resolves to; {} where it does not resolve (the trial then fails
    with the reason, in its own run)."""
    try:
        trial = resolve_trial(config)
    except InputError:
        return {}
    return resolved_settings(trial)


def param_text(value: Any) -> str:
    """`value` as an MLflow param: JSON for a list, tuple or mapping, text otherwise, cut at MLflow's length."""
    text = json.dumps(value, default=str) if isinstance(value, (list, tuple, dict)) else str(value)
    return text if len(text) <= MAX_PARAM_LENGTH else text[:MAX_PARAM_LENGTH - len(CUT_MARK)] + CUT_MARK
