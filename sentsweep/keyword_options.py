"""A sweep's options given as Python keywords (`sentsweep.run(..., ratios=[0.6], seeds=2)`), read by the command
line's own parser, so that the keywords and the flags are one definition and are checked alike.

Each keyword is a flag without its dashes, `-` as `_` (`--max-steps`: `max_steps`, `--set`: `set`; the field's
name, `assignments`, is taken too). Its value is written as the command line would give it and parsed by the parser
of the sweep's options class (`sentsweep.sweep.config.options.build_options_parser`): a switch takes True or False; an
option of several values a list or tuple (one value alone counts as a list of one); `set` also a mapping
({"temperature": 0.05}, each value written as JSON); any other option one value, None leaving it at its default.
Whatever argparse would refuse (a value of the wrong type, one outside its choices, two options of one exclusive
group) is an `InputError` with argparse's message; a keyword no option has, or a value of the wrong shape, is one
naming it.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

from sentsweep.errors import InputError
from sentsweep.registry import closest
from sentsweep.sweep.config.options import SweepOptions, flag_of, parse_options

SET_FIELD = "assignments"  # the field of --set, whose keyword is `set`


def keyword_name(spec: dataclasses.Field) -> str:
    """An option's keyword: its flag without the dashes, `-` as `_` (`--max-steps`: max_steps, `--set`: set)."""
    return flag_of(spec)[2:].replace("-", "_")


def option_fields(cls: type[SweepOptions]) -> dict[str, dataclasses.Field]:
    """{keyword: field} of every option of `cls`, by its keyword and by its field's name."""
    fields = {}
    for spec in dataclasses.fields(cls):
        fields[keyword_name(spec)] = spec
        fields.setdefault(spec.name, spec)
    return fields


def keyword_argv(cls: type[SweepOptions], given: Mapping[str, Any]) -> list[str]:
    """The command line of the options `given` as keywords (see the module docstring), in the order given."""
    fields = option_fields(cls)
    hints = typing.get_type_hints(cls)
    argv: list[str] = []
    for name, value in given.items():
        spec = fields.get(name)
        if spec is None:
            suggestion = closest(name, [keyword_name(spec) for spec in dataclasses.fields(cls)])
            hint = f"; did you mean {suggestion!r}?" if suggestion else ""
            raise InputError(f"unknown option {name}={value!r}{hint} (the options are the command line's, "
                             "dashes as underscores: max_steps for --max-steps)")
        argv += _flag_and_values(spec, hints[spec.name], name, value)
    return argv


def keyword_options(cls: type[SweepOptions], given: Mapping[str, Any]) -> SweepOptions:
    """The frozen options of the keywords `given`, parsed as their command line is; `InputError` on bad ones."""
    return parse_options(cls, keyword_argv(cls, given), prog="sentsweep.run", exit_on_error=False)


def _flag_and_values(spec: dataclasses.Field, hint, name: str, value: Any) -> list[str]:
    flag = flag_of(spec)
    if value is None:
        return []
    if hint is bool:
        if not isinstance(value, bool):
            raise InputError(f"{name}={value!r}: takes True or False")
        return [flag] if value else []
    if _takes_several(hint):
        values = _values(spec, name, value)
        if spec.metadata.get("repeat"):
            return [text for item in values for text in (flag, item)]
        return [flag, *values] if values else []
    if isinstance(value, (list, tuple, set, dict)):
        raise InputError(f"{name}={value!r}: takes one value")
    return [f"{flag}={_text(value)}"]


def _takes_several(hint) -> bool:
    """Whether an option's type is a tuple of values (or a tuple or None)."""
    kinds = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return any(typing.get_origin(kind) is tuple for kind in kinds)


def _values(spec: dataclasses.Field, name: str, value: Any) -> list[str]:
    """The texts of an option of several values: a list or tuple of them, one alone, or for `set` a mapping."""
    if isinstance(value, Mapping):
        if spec.name != SET_FIELD:
            raise InputError(f"{name}={value!r}: takes a list of values, not a mapping")
        return [f"{key}={item if isinstance(item, str) else json.dumps(item)}" for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [_text(item) for item in value]
    if isinstance(value, (set, dict)):
        raise InputError(f"{name}={value!r}: takes a list of values")
    return [_text(value)]


def _text(value: Any) -> str:
    """A value as its command line writes it: a switch's True as true (JSON, as --set reads it), else str()."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def call_text(experiment: str, given: Mapping[str, Any]) -> str:
    """The `sentsweep.run` call with these keywords, as Python source (`experiment`: its first argument's text)."""
    return f"sentsweep.run({', '.join([experiment, *(f'{name}={value!r}' for name, value in given.items())])})"
