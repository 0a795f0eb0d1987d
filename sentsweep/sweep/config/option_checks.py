"""The command line's options on their own and together, checked before anything is read or started.

- Every number an option takes is finite and within the option's bounds: its metadata `gt`, `ge`, `lt`, `le`
  (`check_option_bounds`). An option that stands for a setting (metadata `setting`: `--lr`, `--ratios`,
  `--sample-sizes`) is checked as that setting once the sweep's settings are resolved, with the setting's own
  bounds; here only its numbers' finiteness.
- The search, the race and the early-stopping scheduler form a combination that runs
  (`check_search_combination`): a race compares a fixed set of configurations over seeds and decides their
  stops itself, so it takes a grid and no scheduler; the race's own options need `--race`; `--sampler rung-gp`
  stops configurations itself too, so it takes neither a race nor a scheduler.

Both need the options alone, so a sweep script checks them as soon as its command line is parsed
(`sentsweep.sweep.launch.entry_point`), before torch or Ray load; a setting given on the command line is checked against
the sweep's axes by `sentsweep.sweep.config.swept_settings`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions, flag_of

BOUNDS = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
NUMBERS = (int, float)


def numeric_options(cls: type[SweepOptions]) -> list[dataclasses.Field]:
    """The fields of an options class that take numbers: int or float, optional, a tuple of them, or a number
    among other types (`--gpus-per-trial`: a number or 'auto')."""
    hints = typing.get_type_hints(cls)
    return [spec for spec in dataclasses.fields(cls) if _takes_numbers(hints[spec.name])]


def _takes_numbers(hint) -> bool:
    if hint is bool:
        return False
    if hint in NUMBERS:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_takes_numbers(member) for member in typing.get_args(hint))
    if origin is tuple:
        return any(_takes_numbers(member) for member in typing.get_args(hint) if member is not Ellipsis)
    return False


def bounds_text(spec: dataclasses.Field) -> str:
    """An option's bounds in words: an interval where it has two, `>= 0` where it has one."""
    metadata = spec.metadata
    low = next(((key, metadata[key]) for key in ("gt", "ge") if metadata.get(key) is not None), None)
    high = next(((key, metadata[key]) for key in ("lt", "le") if metadata.get(key) is not None), None)
    if low and high:
        return f"in {'(' if low[0] == 'gt' else '['}{low[1]:g}, {high[1]:g}{')' if high[0] == 'lt' else ']'}"
    return " and ".join(f"{symbol} {metadata[key]:g}" for key, symbol in BOUNDS if metadata.get(key) is not None)


def _within(spec: dataclasses.Field, value: float) -> bool:
    metadata = spec.metadata
    return all(metadata.get(key) is None or holds(value, metadata[key]) for key, holds in (
        ("gt", lambda v, b: v > b), ("ge", lambda v, b: v >= b), ("lt", lambda v, b: v < b),
        ("le", lambda v, b: v <= b)))


def _numbers(value: Any) -> list:
    values = value if isinstance(value, tuple) else (value,)
    return [number for number in values if isinstance(number, NUMBERS) and not isinstance(number, bool)]


def check_option_bounds(options: SweepOptions) -> None:
    """Every number of every numeric option finite and within its bounds; else an `InputError` naming the flag
    and the value."""
    for spec in numeric_options(type(options)):
        value = getattr(options, spec.name)
        shown = _shown(value)
        each = "each " if isinstance(value, tuple) and len(value) > 1 else ""
        for number in _numbers(value):
            if not math.isfinite(number):
                raise InputError(f"{flag_of(spec)} {shown}: {each}must be a finite number")
            if not _within(spec, number):
                raise InputError(f"{flag_of(spec)} {shown}: {each}must be {bounds_text(spec)}")


def _choices(name: str) -> tuple:
    """The values an option of `SweepOptions` can take: its `Literal` type's or its metadata `choices`."""
    spec = next(spec for spec in dataclasses.fields(SweepOptions) if spec.name == name)
    hint = typing.get_type_hints(SweepOptions)[name]
    return typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else tuple(spec.metadata["choices"])


def search_combinations() -> list[dict[str, Any]]:
    """Every combination of --search, --race, --race-schedule and --scheduler the options' choices allow."""
    return [{"search": search, "race": race, "race_schedule": schedule, "scheduler": scheduler}
            for search in _choices("search") for race in (False, True) for schedule in _choices("race_schedule")
            for scheduler in _choices("scheduler")]


def check_search_combination(options: SweepOptions) -> None:
    """The search, race and scheduler options in a combination that runs; else an `InputError` naming both
    options of the conflict, why, and what to give instead."""
    defaults = SweepOptions.defaults()
    if options.sampler == "rung-gp" and options.race:
        raise InputError("--sampler rung-gp and --race: rung-gp stops configurations itself, at its rungs on the "
                         "seeds' paired test, while a race decides the stops of a fixed grid; give one: --search "
                         "optuna --sampler rung-gp, or --search grid --race")
    if options.sampler == "rung-gp" and options.scheduler != defaults["scheduler"]:
        raise InputError(f"--sampler rung-gp and --scheduler {options.scheduler}: rung-gp stops configurations "
                         "itself, at its rungs on the seeds' paired test; give one: --sampler rung-gp, or "
                         f"--scheduler {options.scheduler} with --sampler tpe or noise-gp")
    if options.sampler != "tpe" and options.search != "optuna":
        raise InputError(f"--sampler {options.sampler} with --search {options.search}: the sampler proposes "
                         "configurations of --search optuna; add --search optuna, or leave --sampler out")
    if not options.race:
        given = [spec for spec in dataclasses.fields(SweepOptions) if spec.name.startswith("race_")
                 and getattr(options, spec.name) != defaults[spec.name]]
        if given:
            raise InputError(f"{flag_of(given[0])} {_shown(getattr(options, given[0].name))} without --race: "
                             "it sets how a race runs; add --race, or leave it out")
        return
    if options.search != "grid":
        raise InputError(f"--search {options.search} and --race: a race compares a fixed set of configurations "
                         f"over the seeds, while {options.search} chooses each next configuration from the results "
                         "so far; race a grid (--search grid --race), or give --search optuna with --scheduler asha "
                         "or median, which judge its configurations on their seeds' mean")
    if options.scheduler != defaults["scheduler"]:
        raise InputError(f"--scheduler {options.scheduler} and --race: the race stops configurations itself, on "
                         f"its tests over the seeds; give one: --race, or --scheduler {options.scheduler} without it")


def _shown(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, tuple) else str(value)


def check_budget_options(time_budget: float | None, gpu_hours: float | None, gpus_per_trial: float | str) -> None:
    """The budget options together, before Ray starts (each on its own: `check_option_bounds`)."""
    if gpu_hours is not None and gpus_per_trial == 0:
        raise InputError(f"--gpu-hours {gpu_hours:g} with --gpus-per-trial 0: the trials hold no GPU to count")
