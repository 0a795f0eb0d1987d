"""Typed settings: frozen dataclasses whose fields carry their default, allowed values, help and source.

In the manner of transformers' argument dataclasses, every setting of the shared training loop, of the
evaluation and of each method is one field declared with `setting(...)`:

    @dataclass(frozen=True)
    class SimCseSettings(Settings):
        temperature: float = setting(0.05, "softmax temperature tau", cited(THESIS_WANG_2022, "Table 5.3"), gt=0)

`SimCseSettings.from_config({"temperature": 0.1})` checks the type (a bool is not a number, an int is a float,
a number is finite: `inf` and `nan` are refused whatever the bounds) and the range or choices of every value it
takes, raising an `InputError` that names the key and the bad value.
Which keys a config may hold at all is decided where several settings groups meet (see
`sentsweep.trainables.resolve_trial`): an unknown key is refused there, with the closest known key suggested.

A field's `source` says where its default comes from: a place in a reference (`cited`) or the project's own
choice where the sources are silent or say otherwise (`project_choice`). Protocol cards print them.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from sentsweep.errors import InputError
from sentsweep.references import Reference
from sentsweep.registry import closest

SettingsType = TypeVar("SettingsType", bound="Settings")


@dataclass(frozen=True)
class Source:
    """Where a default comes from: `where` in `reference` (a section, table, equation), or the project's choice
    (`reference` None), with a note on what the sources say when they differ."""

    reference: Reference | None
    where: str = ""
    note: str = ""
    is_input: bool = False

    def __str__(self) -> str:
        if self.is_input:
            return "input (no default)"
        if self.reference is None:
            return "project choice" + (f" ({self.note})" if self.note else "")
        text = f"{self.reference.label} {self.where}".strip()
        return text + (f" ({self.note})" if self.note else "")


def cited(reference: Reference, where: str, note: str = "") -> Source:
    """A value's source in a published work: `cited(TSDAE, "App. A, Table 6")`, with an optional `note`.

    Examples:
        >>> tsdae = sentsweep.Reference("TSDAE", "Kexin Wang, Nils Reimers, Iryna Gurevych", "TSDAE", 2021,
        ...                             "Findings of EMNLP 2021")
        >>> str(sentsweep.cited(tsdae, "App. A, Table 6"))
        'TSDAE App. A, Table 6'
    """
    return Source(reference, where, note)


def project_choice(note: str = "") -> Source:
    """A value the project chose (no work gives it), `note` saying why: `project_choice("CPU-sized")`.

    Examples:
        >>> str(sentsweep.project_choice("CPU-sized"))
        'project choice (CPU-sized)'
    """
    return Source(None, "", note)


def required_input() -> Source:
    """For a setting without a default: the sweep or the user gives it (data files, the model, a rate)."""
    return Source(None, is_input=True)


def setting(default: Any = MISSING, help: str = "", source: Source | None = None, *, choices: tuple = (),
            gt: float | None = None, ge: float | None = None, lt: float | None = None, le: float | None = None):
    """A settings field: its default (none: required), help text, source, and allowed values (choices, or
    bounds gt/ge/lt/le). `Literal[...]` annotations give the choices too. A setting without a `source` is a
    `TypeError`.

    Examples:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class UniformitySettings(sentsweep.Settings):
        ...     uniformity_t: float = sentsweep.setting(2.0, "kernel temperature t",
        ...                                             sentsweep.project_choice("this example's"), gt=0)
        >>> UniformitySettings.from_config({"uniformity_t": -1.0})
        Traceback (most recent call last):
        sentsweep.errors.InputError: setting uniformity_t=-1.0 is out of range: must be > 0
    """
    if source is None:
        raise TypeError("every setting needs a source: cited(...) or project_choice(...)")
    metadata = {"help": help, "source": source, "choices": tuple(choices), "gt": gt, "ge": ge, "lt": lt, "le": le}
    if isinstance(default, (list, dict, set)):
        raise TypeError("mutable defaults are not allowed in frozen settings; use a tuple or None")
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class SettingDescription:
    """One row of a settings table or protocol card."""

    name: str
    default: Any
    allowed: str
    help: str
    source: Source


class Settings:
    """Base of the settings dataclasses (declare subclasses with `@dataclass(frozen=True)`): a method's or a task's
    typed settings, each field a `setting` with its default, bounds and source. `from_config` reads and checks
    them from a trial's config (defaults for the rest); `describe` gives the rows of the protocol card.

    Examples:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class TemperatureSettings(sentsweep.Settings):
        ...     temperature: float = sentsweep.setting(0.05, "softmax temperature",
        ...                                            sentsweep.project_choice("SimCSE's"), gt=0)
        >>> TemperatureSettings.from_config({"temperature": 0.1, "lr": 3e-5})
        TemperatureSettings(temperature=0.1)
        >>> [(row.name, row.default) for row in TemperatureSettings.describe()]
        [('temperature', 0.05)]
    """

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in dataclasses.fields(cls))

    @classmethod
    def from_config(cls: type[SettingsType], config: Mapping[str, Any]) -> SettingsType:
        """The settings in `config` (other keys are left to the caller), each checked; defaults for the rest."""
        hints = typing.get_type_hints(cls)
        values = {}
        for field in dataclasses.fields(cls):
            if field.name in config:
                values[field.name] = _checked(field, hints[field.name], config[field.name])
            elif field.default is MISSING:
                raise InputError(f"missing setting {field.name!r}: {field.metadata.get('help', '')}")
        return cls(**values)

    @classmethod
    def check_value(cls, name: str, value: Any) -> None:
        """An `InputError` where `value` is not one setting `name` of this class can take (its type, range or
        choices), as `from_config` checks it."""
        field = next(field for field in dataclasses.fields(cls) if field.name == name)
        _checked(field, typing.get_type_hints(cls)[name], value)

    @classmethod
    def describe(cls) -> list[SettingDescription]:
        hints = typing.get_type_hints(cls)
        return [
            SettingDescription(field.name, None if field.default is MISSING else field.default,
                               allowed_values(field, hints[field.name]), field.metadata["help"],
                               field.metadata["source"])
            for field in dataclasses.fields(cls)
        ]

    def to_config(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _choices(field: dataclasses.Field, hint) -> tuple:
    literal = next((get_args(arg) for arg in _union_members(hint) if get_origin(arg) is Literal), ())
    return field.metadata["choices"] or literal


def _union_members(hint) -> tuple:
    return get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,)


def allowed_values(field: dataclasses.Field, hint) -> str:
    """The field's allowed values in words: choices, or a type with bounds."""
    choices = _choices(field, hint)
    if choices:
        return " | ".join(map(str, choices))
    bounds = [f"{symbol} {field.metadata[key]}"
              for key, symbol in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
              if field.metadata[key] is not None]
    names = [getattr(member, "__name__", str(member)) for member in _union_members(hint)]
    return " or ".join(name if name != "NoneType" else "none" for name in names) + (
        f", {' and '.join(bounds)}" if bounds else "")


def _checked(field: dataclasses.Field, hint, value):
    """`value` if it has the field's type and lies in its range or choices; else an `InputError`."""
    members = _union_members(hint)
    if value is None:
        if type(None) in members:
            return None
        raise InputError(f"setting {field.name!r} needs a value, got null")
    choices = _choices(field, hint)
    if choices:
        if value not in choices or isinstance(value, bool) != isinstance(choices[0], bool):
            suggestion = closest(str(value), [str(choice) for choice in choices])
            hint = f"; did you mean {suggestion!r}?" if suggestion else ""
            raise InputError(f"setting {field.name}={value!r}: expected one of {', '.join(map(repr, choices))}{hint}")
        return value
    kinds = [member for member in members if member is not type(None)]
    kind = kinds[0] if len(kinds) == 1 else None
    if kind is bool and not isinstance(value, bool):
        raise InputError(f"setting {field.name}={value!r} must be true or false")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"setting {field.name}={value!r} must be a whole number")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise InputError(f"setting {field.name}={value!r} must be a number")
    if kind is str and not isinstance(value, str):
        raise InputError(f"setting {field.name}={value!r} must be text")
    if get_origin(kind) is dict and not isinstance(value, dict):
        raise InputError(f"setting {field.name}={value!r} must be a mapping")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"setting {field.name}={value!r} must be a finite number")
    for key, holds, words in (("gt", lambda v, b: v > b, ">"), ("ge", lambda v, b: v >= b, ">="),
                              ("lt", lambda v, b: v < b, "<"), ("le", lambda v, b: v <= b, "<=")):
        bound = field.metadata[key]
        if bound is not None and not holds(value, bound):
            raise InputError(f"setting {field.name}={value!r} is out of range: must be {words} {bound}")
    return float(value) if kind is float else value
