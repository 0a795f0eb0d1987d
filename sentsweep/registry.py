"""Named registries (methods, objectives, evaluation tasks, experiments), in the manner of MTEB's `get_task`.

An entry is registered once under its name, a second entry with the same name is refused, and an unknown
name is an `InputError` that lists the known names and suggests the closest one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Generic, TypeVar

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


class Registry(Generic[Entry]):
    """Entries of one `kind` by name."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def add(self, name: str, entry: Entry) -> Entry:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

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
