"""The experiments, a package per paper, each experiment a module named as the sweep script that runs it
(`sweeps/<name>.py`).

`tsdae`, `reiml_2023`, `wang_2022`, `malmberg_2021` and `tsdae_gpl_draft` (the works of
`sentsweep.references.SOURCE_DOCUMENTS`) each hold that work's published values (`published`), the findings its
text states in words about its figures as orderings of cells (`findings`, where a sweep re-runs such a figure) and
the experiments re-running it; `combined` holds the experiments over several works. An experiment module defines
`DEFINITION`, a `sentsweep.sweep.SweepDefinition`; its protocol is its paper's module of `sentsweep.search_spaces`.
`get_experiment(name)` finds one by name (an unknown name suggests the closest), `experiment_names()` lists them;
`sentsweep run NAME` runs one.
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

from sentsweep.registry import unknown_name
from sentsweep.sweep import SweepDefinition

# A module of a paper's package that assigns DEFINITION at its top level is an experiment; read, not imported.
_DEFINES_AN_EXPERIMENT = re.compile(r"^DEFINITION\s*[:=]", re.M)


@functools.cache
def experiment_modules() -> dict[str, str]:
    """{experiment name: its module's dotted name}, sorted by name."""
    found = {}
    for path in Path(__file__).parent.glob("*/*.py"):
        if _DEFINES_AN_EXPERIMENT.search(path.read_text(encoding="utf-8")):
            found[path.stem] = f"{__name__}.{path.parent.name}.{path.stem}"
    return dict(sorted(found.items()))


def experiment_names() -> list[str]:
    """The names of the experiments (`get_experiment`, `sentsweep list`), sorted.

    Examples:
        >>> "tsdae_deletion" in sentsweep.experiment_names()
        True
    """
    return list(experiment_modules())


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
    if name not in experiment_modules():
        raise unknown_name("experiment", name, experiment_names())
    return importlib.import_module(experiment_modules()[name]).DEFINITION
