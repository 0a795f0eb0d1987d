"""The experiments, one module each, named as the sweep scripts that run them (`sweeps/<name>.py`).

Each module defines `DEFINITION`, a `sentsweep.sweep.SweepDefinition`. `get_experiment(name)` finds one by
name (an unknown name suggests the closest), `experiment_names()` lists them; `sentsweep run NAME` runs one.
The seeds' protocols several experiments share are `protocols/`'s; modules starting with `_` are an experiment's
data (published values, the intersection search).
"""

from __future__ import annotations

import importlib
import pkgutil

from sentsweep.registry import unknown_name
from sentsweep.sweep import SweepDefinition


def experiment_names() -> list[str]:
    """The names of the experiments (`get_experiment`, `sentsweep list`), sorted.

    Examples:
        >>> "tsdae_deletion" in sentsweep.experiment_names()
        True
    """
    return sorted(module.name for module in pkgutil.iter_modules(__path__)
                  if not module.name.startswith("_") and not module.ispkg)  # protocols/: the shared protocols


def get_experiment(name: str) -> SweepDefinition:
    """The definition of experiment `name`; an unknown name is an `InputError` naming the known ones.

    Examples:
        >>> definition = sentsweep.get_experiment("tsdae_deletion")
        >>> definition.name, [stage.name for stage in definition.stages]
        ('tsdae_deletion', ['deletion_ratio x pooling'])
        >>> sentsweep.get_experiment("tsdae_deletions")
        Traceback (most recent call last):
        sentsweep.errors.InputError: unknown experiment 'tsdae_deletions'; did you mean 'tsdae_deletion'? (known: ...)
    """
    if name not in experiment_names():
        raise unknown_name("experiment", name, experiment_names())
    return importlib.import_module(f"{__name__}.{name}").DEFINITION
