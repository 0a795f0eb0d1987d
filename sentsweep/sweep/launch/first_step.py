"""A method of one's own (an objective, a method or a trainer script registered outside sentsweep) takes one
training step on a tiny random model before the sweep launches: a builder or a loss that fails does so in seconds
on the driver, with the file and line, rather than in every trial on the cluster, retried.

The step reads the first lines of the sweep's data files only (`small_data`: `CHECK_LINES` sentences or pairs of
each text file of the corpus, of STS-benchmark files): the check, evaluations included (a trainer script's own
evaluator too), takes seconds whatever the size of the data."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.plugins import place_in_own_code
from sentsweep.trainables.catalog import METHODS, get_method, resolve_trial
from sentsweep.trainables.objectives import OBJECTIVES, parse_method
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.st_losses import is_st_method

BUILT_IN = "sentsweep"
CHECK_LINES = 32  # sentences, or scored pairs, of each data file the check's step reads
# the settings naming a file of one sentence per line, and those naming STS-benchmark pairs (eval_format stsb)
SENTENCE_FILES = ("corpus", "validation_file")
PAIR_FILES = ("dev_file", "test_file", "train_file")


def small_data(config: dict, folder: Path) -> dict:
    """The settings of `config` naming a text data file, each pointed at a copy of its first `CHECK_LINES` lines
    in `folder` (STS-benchmark pairs only for eval_format stsb; other formats stay whole); a held-out validation
    split shrunk to fit."""
    keys = SENTENCE_FILES + (PAIR_FILES if config.get("eval_format", "stsb") == "stsb" else ())
    small = {}
    for key in keys:
        value = config.get(key)
        if isinstance(value, str) and Path(value).is_file():
            with open(value, encoding="utf-8") as handle:
                lines = [line for _, line in zip(range(CHECK_LINES), handle)]
            copy = folder / key / Path(value).name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text("".join(lines), encoding="utf-8")
            small[key] = str(copy)
    if config.get("select_checkpoint") == "validation_loss" and not config.get("validation_file"):
        small["validation_size"] = CHECK_LINES // 4
    return small


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
            with tempfile.TemporaryDirectory(prefix="sentsweep-check-") as folder:
                get_method(method).run(resolve_trial(config | small_data(config, Path(folder))), LocalSession())
        except Exception as error:
            where = f" at {place}" if (place := place_in_own_code(error)) else ""
            raise InputError(f"method {method!r} failed its first step on a tiny model{where}: "
                             f"{type(error).__name__}: {error}") from None
