"""A method of one's own (an objective, a method or a trainer script registered outside sentsweep) takes one
training step on a tiny random model before the sweep launches: a builder or a loss that fails does so in seconds
on the driver, with the file and line, rather than in every trial on the cluster, retried."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.plugins import place_in_own_code
from sentsweep.trainables.catalog import METHODS, get_method, resolve_trial
from sentsweep.trainables.objectives import OBJECTIVES, parse_method
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.st_losses import is_st_method

BUILT_IN = "sentsweep"


def own_code(method: str) -> bool:
    """Whether the method (or an objective it joins) was registered by code outside sentsweep."""
    if method in METHODS:
        origins = [METHODS.origin(method)]
    elif is_st_method(method):
        return False
    else:
        origins = [OBJECTIVES.origin(name) for name in parse_method(method)]
    return any(origin.split(".")[0] != BUILT_IN for origin in origins)


def check_own_methods_start(points: dict[str, dict], tiny_model: Callable[[], Path]) -> None:
    """Run one step (and its evaluations) of each method of one's own, at the first point the sweep checked of it,
    on the model `tiny_model()` builds (only where there is such a method); an `InputError` naming the method, and
    the file and line where its code failed."""
    for method, point in points.items():
        if not own_code(method):
            continue
        config = point | {"model": str(tiny_model()), "max_steps": 1, "epochs": None, "eval_steps": 1, "seed": 0,
                          "keep_model": False, "eval_tasks": None, "preparation_cache": None}
        try:
            get_method(method).run(resolve_trial(config), LocalSession())
        except Exception as error:
            where = f" at {place}" if (place := place_in_own_code(error)) else ""
            raise InputError(f"method {method!r} failed its first step on a tiny model{where}: "
                             f"{type(error).__name__}: {error}") from None
