"""What a sweep's runs, logged models and metrics are called in MLflow: one place, which writers and readers share.

Three levels of runs (the sweep's, a configuration's named by its axes' values, a trial's by its configuration and
seed), the logged models' names (MLflow's allowed characters, the seed first), and the metric and param keys
(`mlflow_metric_key`, `param_key`, `statistic_key`).

    >>> name = configuration_name({"noise_ratio": 0.3, "pooling": "mean"})
    >>> name, trial_run_name(name, 0), logged_model_name(trial_run_name(name, 0))
    ('noise_ratio=0.3 pooling=mean', 'noise_ratio=0.3 pooling=mean · seed 0', 'seed 0 · noise_ratio=0p3 pooling=mean')

Details: docs/mlflow.md, "How runs, models and metrics are named"."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from sentsweep.trainables.compute import COMPUTE_METRICS, TIMING_METRICS

BOOKKEEPING_PREFIX = "system/"
# A sweep run's own bookkeeping: the driver's time writing to MLflow (sentsweep.tracking.writer).
WRITE_SECONDS = "mlflow_write_seconds"
BOOKKEEPING_METRICS = frozenset(TIMING_METRICS + COMPUTE_METRICS + (WRITE_SECONDS,))
STATISTICS = ("mean", "std", "n", "ci95_low", "ci95_high")  # of a configuration's seeds, for each table metric
SHOWN_DIGITS = 2  # decimals of a statistic as the tables print it (sentsweep.analysis.tables.to_markdown)
# One-letter axes and the descriptive param logged beside them (the setting's help: UnsupervisedSettings.w).
PARAM_ALIASES = {"w": "second_objective_weight"}
SEED_SEPARATOR = " · seed "
MAX_RUN_NAME = 250  # characters of a run name MLflow's stores keep
# What a logged model's name may not hold (mlflow.utils.validation._validate_logged_model_name), and instead; a
# point between digits, a decimal point, is DECIMAL_POINT.
LOGGED_MODEL_REFUSED = {".": "_", "/": "|", ":": "-", "%": " pct", '"': "", "'": ""}
DECIMAL_POINT = "p"


def param_key(name: str) -> str:
    """`name` as an MLflow param key, which may hold only letters, digits, `_ - . : /` and spaces
    (mlflow.utils.validation): a combined method's `+` reads as ' plus ' (`method_settings.tsdae plus nm`), any other
    character refused as `_`."""
    return re.sub(r"[^A-Za-z0-9_\-.:/ ]", "_", name.replace("+", " plus "))


def mlflow_metric_key(name: str) -> str:
    """The MLflow key of a reported metric: `system/<name>` for bookkeeping, else the name itself."""
    return BOOKKEEPING_PREFIX + name if name in BOOKKEEPING_METRICS else name


def result_step(result: Mapping[str, Any]) -> int:
    """The step a trial's result is logged at in MLflow: its training step (`step`), else Ray Tune's
    `training_iteration` (a trial that does not train: 0)."""
    return int(result.get("step", result.get("training_iteration", 0)))


def statistic_key(metric: str, statistic: str) -> str:
    """A configuration run's metric for a statistic (one of `STATISTICS`) of a table metric: best_sts_dev_mean."""
    return f"{metric}_{statistic}"


def statistic_metrics(statistics: Mapping[str, Mapping[str, Any]], timestamp_ms: int,
                      logged: set[str] | None = None) -> list[tuple[str, float, int, int]]:
    """{metric: {statistic: value}} as MLflow metrics (key, value, timestamp, step 0): each value rounded to the
    tables' `SHOWN_DIGITS` decimals (n whole). An undefined value (a std of one seed, an interval of fewer than 3:
    None or NaN) is left out, so that no chart shows an empty series, unless its key is in `logged` (keys logged
    with a value before: NaN then replaces that value); the keys logged with a value are added to `logged`."""
    logged = set() if logged is None else logged
    metrics = []
    for metric, values in statistics.items():
        for statistic in STATISTICS:
            key, value = statistic_key(metric, statistic), values.get(statistic)
            if value is None or not math.isfinite(float(value)):
                if key in logged:
                    metrics.append((key, math.nan, timestamp_ms, 0))
                continue
            logged.add(key)
            value = float(value)
            metrics.append((key, float(round(value)) if statistic == "n" else round(value, SHOWN_DIGITS),
                            timestamp_ms, 0))
    return metrics


def value_text(value: Any) -> str:
    """A value as a name shows it: as MLflow's param text, a long number cut to 4 significant digits."""
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text
    return f"{number:.4g}" if len(text) > 8 else text


def configuration_name(values: Mapping[str, Any]) -> str:
    """`axis=value` for each axis of the configuration (in the stage's order; an axis a method has no value for,
    None, left out): 'noise_ratio=0.3 pooling=mean'."""
    return " ".join(f"{axis}={value_text(value)}" for axis, value in values.items() if value is not None)[:MAX_RUN_NAME]


def trial_run_name(configuration: str, seed: Any) -> str:
    return f"{configuration}{SEED_SEPARATOR}{seed}"[:MAX_RUN_NAME]


def logged_model_name(run_name: str) -> str:
    """A trial's model's name: its run's (`trial_run_name`) with the seed first (`seed 1 · noise_ratio=0p3
    pooling=mean`), what MLflow refuses in a logged model's name replaced (`LOGGED_MODEL_REFUSED`, a decimal point
    as `DECIMAL_POINT`)."""
    configuration, separator, seed = run_name.rpartition(SEED_SEPARATOR)
    name = f"seed {seed.strip()} · {configuration.strip()}" if separator and configuration.strip() else run_name
    name = re.sub(r"(?<=\d)\.(?=\d)", DECIMAL_POINT, name)
    for refused, instead in LOGGED_MODEL_REFUSED.items():
        name = name.replace(refused, instead)
    return name.strip() or "model"


def with_aliases(params: Mapping[str, str]) -> dict[str, str]:
    """`params` and, for each one-letter axis among them, its descriptive alias of the same value."""
    return dict(params) | {alias: params[name] for name, alias in PARAM_ALIASES.items() if name in params}
