"""The sweep run's value of each setting its trials report themselves: the value they used, not the protocol's.

A trainer script's trial reports the training settings its trainer used (`sentsweep.trainables.trainer_script`:
the model's own `max_seq_length`, the rate its `TrainingArguments` got), which may differ from the protocol's. The
sweep's run therefore logs none of those settings as it starts (`trial_reported_names`, left out of
`sentsweep.tracking.sweep_run.experiment_params`) and, as the sweep ends, each as its trials recorded it
(`values_used`): the one value every trial that recorded it used, or, where they differ, the text
`differs by trial: 128 (2 trials), 256 (2 trials)` naming each value and how many trials used it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from sentsweep.errors import InputError
from sentsweep.trainables.catalog import get_method
from sentsweep.trainables.resolved_settings import reported_by_trial

DIFFERS = "differs by trial: "


def sweep_methods(constants: Mapping, stages: Iterable[tuple[str, Mapping]]) -> list[str]:
    """The methods a sweep's trials run: its fixed method and each value of a stage's `method` axis (a list, or a
    sampled choice's categories)."""
    methods = [constants["method"]] if "method" in constants else []
    for _, axes in stages:
        values = axes.get("method", [])
        methods += [str(value) for value in getattr(values, "categories", values)]
    return list(dict.fromkeys(methods))


def trial_reported_names(constants: Mapping, stages: Iterable[tuple[str, Mapping]]) -> frozenset[str]:
    """The settings that a trial of one of the sweep's methods reports itself (`reported_by_trial`)."""
    names: set[str] = set()
    for method in sweep_methods(constants, stages):
        try:
            get_method(method)
        except InputError:
            continue  # refused before launch, by the launcher's checks
        names |= reported_by_trial({"method": method})
    return frozenset(names)


def values_used(trial_params: Iterable[Mapping[str, str]], names: Iterable[str]) -> dict[str, str]:
    """{name: the value the trials recorded} for each of `names` that a trial recorded (`trial_params`: each trial
    run's params), or `differs by trial: ...` where they recorded several."""
    counts: dict[str, Counter] = {}
    for params in trial_params:
        for name in names:
            if name in params:
                counts.setdefault(name, Counter())[params[name]] += 1
    return {name: next(iter(found)) if len(found) == 1 else DIFFERS + ", ".join(
        f"{value} ({n} trial{'s' * (n != 1)})" for value, n in sorted(found.items()))
        for name, found in sorted(counts.items())}
