"""A setting given on the command line (`--set KEY=VALUE`, or an option that stands for one: `--lr`) is given once,
and is no axis of the sweep: the trials of a swept axis run its values, so one value for all would be shown on the
card and not run. Such a setting is refused, naming the options that give the axis its values (`--ratios`, or
`--ratio-range` under --search optuna; metadata `setting` of the options class names the setting an option
stands for); a value the setting cannot take is refused as such first."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions, flag_of, parse_assignments
from sentsweep.trainables.catalog import check_setting_value


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
