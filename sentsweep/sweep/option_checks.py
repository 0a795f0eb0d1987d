"""The command line's options on their own and together, checked before anything is read or started.

- Every number an option takes is finite and within the option's bounds: its metadata `gt`, `ge`, `lt`, `le`
  (`check_option_bounds`). An option that stands for a setting (metadata `setting`: `--lr`, `--ratios`,
  `--sample-sizes`) is checked as that setting once the sweep's settings are resolved, with the setting's own
  bounds; here only its numbers' finiteness.
- The search, the race and the early-stopping scheduler form a combination that runs
  (`check_search_combination`): a race compares a fixed set of configurations over seeds and decides their
  stops itself, so it takes a grid and no scheduler; the race's own options need `--race`.
- A setting given on the command line (`--set KEY=VALUE`, `--lr`) is given once, and is no axis of the sweep
  (`check_swept_settings`): the axis' own options give its values (`--ratios`, `--ratio-range`).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

from sentsweep.errors import InputError
from sentsweep.sweep.options import SweepOptions, flag_of, parse_assignments
from sentsweep.trainables.catalog import check_setting_value

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


def settings_given(options: SweepOptions) -> dict[str, tuple[str, Any]]:
    """{setting: (how the command line gave it, its value)} of every setting given by --set KEY=VALUE or by an
    option that stands for one setting (metadata `setting`: `--lr`); one given both ways is refused."""
    values = parse_assignments(options.assignments)
    given = {key: (f"--set {assignment}", values[key])
             for assignment in options.assignments for key in [assignment.partition("=")[0]]}
    hints = typing.get_type_hints(type(options))
    for spec in dataclasses.fields(options):
        key, value = spec.metadata.get("setting"), getattr(options, spec.name)
        if key is None or value is None or typing.get_origin(_optional(hints[spec.name])) is tuple:
            continue
        if key in given:
            raise InputError(f"{flag_of(spec)} {value} and {given[key][0]} both set {key}; give one")
        given[key] = (f"{flag_of(spec)} {value}", value)
    return given


def _optional(hint):
    members = [member for member in typing.get_args(hint) if member is not type(None)]
    return members[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(members) == 1 else hint


def check_swept_settings(options: SweepOptions, stages: list[tuple[str, dict]]) -> None:
    """A setting the command line gives that is an axis of one of the sweep's stages: its value is checked as the
    setting (a value out of range is refused as such), then refused, naming the options that give the axis its
    values: every trial takes the axis' values, never one value for all."""
    given = settings_given(options)
    for stage, axes in stages:
        for key in axes.keys() & given.keys():
            shown, value = given[key]
            check_setting_value(key, value)
            instead = axis_options(options, key)
            raise InputError(f"{shown}: {key} is an axis of this sweep (stage {stage!r}: {axis_text(axes[key])}), "
                             "whose trials run the axis' values, not one value for all; "
                             + (f"give its values with {' or '.join(instead)}" if instead else
                                "the sweep gives its values itself"))


def axis_options(options: SweepOptions, key: str) -> list[str]:
    """The flags of the options that give axis `key` its values (metadata `setting`, a tuple of values): a grid's
    values (`--ratios`) under --search grid, the range Optuna samples (`--ratio-range`) where it has one under
    --search optuna."""
    hints = typing.get_type_hints(type(options))
    fields = [spec for spec in dataclasses.fields(options) if spec.metadata.get("setting") == key
              and typing.get_origin(_optional(hints[spec.name])) is tuple]
    ranges = [spec for spec in fields if Ellipsis not in typing.get_args(_optional(hints[spec.name]))]
    values = [spec for spec in fields if spec not in ranges]
    return [flag_of(spec) for spec in ((ranges or values) if options.search == "optuna" else (values or ranges))]


def axis_text(axis) -> str:
    """An axis' values in words: a grid's list, Optuna's choices, or the range it samples."""
    if isinstance(axis, list):
        return ", ".join(map(str, axis))
    if hasattr(axis, "categories"):
        return "sampled from " + ", ".join(map(str, axis.categories))
    return f"sampled from {axis.lower:g} to {axis.upper:g}"
