"""Named registries (methods, objectives, evaluation tasks, experiments), in the manner of MTEB's `get_task`.

An entry is registered once under its name, a second entry with the same name is refused, and an unknown
name is an `InputError` that lists the known names and suggests the closest one.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from sentsweep.errors import InputError

Entry = TypeVar("Entry")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like `name` (difflib ratio >= 0.6), or None."""
    matches = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_name(kind: str, name: str, known: Iterable[str]) -> InputError:
    """The error for an unknown `name` of `kind`: the closest known name, then all of them."""
    known = sorted(known)
    suggestion = closest(name, known)
    hint = f"; did you mean {suggestion!r}?" if suggestion else ""
    return InputError(f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})")


def describe_origin(module: str) -> str:
    """A module as a person knows it: 'sentsweep (built-in, sentsweep.tasks.sts)' or the file of their own (a file
    run as `python FILE.py`, the `__main__` module, under its file name, as `sentsweep run FILE.py` imports it)."""
    if module == "sentsweep" or module.startswith("sentsweep."):
        return f"sentsweep (built-in, {module})"
    file = getattr(sys.modules.get(module), "__file__", None)
    name = Path(file).stem if module == "__main__" and file else module
    return f"{file} (module {name})" if file else f"module {module}"


def exit_with(error: InputError) -> None:
    """End the program as every entry point ends on bad input: `error: <the one line>` and exit code 2. For an
    error in a file run as `python FILE.py`, which no entry point of sentsweep catches (it runs before one)."""
    print(f"error: {error}", file=sys.stderr)
    raise SystemExit(2)


class Registry(Generic[Entry]):
    """Entries of one `kind` by name, each with the module that registered it (its origin: a module of sentsweep
    for the built-in entries, a researcher's own file or module for theirs; see `sentsweep.plugins`)."""

    instances: ClassVar[list[Registry]] = []  # every registry, for the origins of all entries

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        self._origins: dict[str, str] = {}
        Registry.instances.append(self)

    def add(self, name: str, entry: Entry, origin: str | None = None) -> Entry:
        """Register `entry` as `name`; `origin`, the module that defines it, defaults to the entry's
        `__module__`. A name registered before is refused, naming both origins."""
        origin = origin or getattr(entry, "__module__", None) or "an unknown module"
        if name in self._entries:
            collision = InputError(f"{self.kind} {name!r} of {describe_origin(origin)} collides with the {self.kind} "
                                   f"{name!r} of {describe_origin(self._origins[name])}; give it another name")
            if origin == "__main__":  # `python FILE.py`, at its import: no entry point of sentsweep runs yet
                exit_with(collision)
            raise collision
        self._entries[name] = entry
        self._origins[name] = origin
        return entry

    def origin(self, name: str) -> str:
        """The module that registered `name`."""
        self.get(name)
        return self._origins[name]

    def register(self, name: str):
        """Class or function decorator: `@REGISTRY.register("name")`."""
        return lambda entry: self.add(name, entry)

    def get(self, name: str) -> Entry:
        if name not in self._entries:
            raise unknown_name(self.kind, name, self._entries)
        return self._entries[name]

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self):
        return self._entries.items()

    def __contains__(self, name: object) -> bool:
        return name in self._entries
