"""A sweep's protocol as data: every fixed setting, per-method setting, grid and the seeds, each with its source.

A value is `Sourced`: the value and where it comes from, `cited(reference, "§ / Table")` or
`project_choice("what the sources say instead")` (see `sentsweep.settings`). Each experiment's `Protocol` is
declared once, in its paper's module of `sentsweep.search_spaces`; the launcher runs it and `--dry-run` prints it
as the protocol card.

Precedence, lowest first: the settings classes' own defaults (with their own sources), the protocol's fixed
`settings`, its `method_settings` (for the trials of that method), the command line (`--set`, `--lr`...),
and a stage's axes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sentsweep.settings import Source, project_choice


@dataclass(frozen=True)
class Sourced:
    """A setting's value, or an axis' values, and where it comes from (`cited` or `project_choice`).

    Examples:
        >>> tsdae = sentsweep.Reference("TSDAE", "Kexin Wang, Nils Reimers, Iryna Gurevych", "TSDAE", 2021,
        ...                             "Findings of EMNLP 2021")
        >>> ratio = sentsweep.Sourced(0.6, sentsweep.cited(tsdae, "section 4.2"))
        >>> ratio.value, str(ratio.source)
        (0.6, 'TSDAE section 4.2')
    """

    value: Any
    source: Source


@dataclass(frozen=True)
class Protocol:
    """What a sweep runs: `settings` fixed for every trial; `method_settings` {method: {setting: value}} for the
    trials of one method (each method run with its own paper's settings); `grids` {axis: values} the stages
    sweep by default; `seeds` (a count or a list); `quick` the project's tiny run (`--quick`, plain values);
    `notes`: what the card must say beyond its values (a seed that contradicts itself, a known gap).

    Examples:
        >>> own = sentsweep.project_choice("CPU-sized")
        >>> protocol = sentsweep.Protocol(settings={"pooling": sentsweep.Sourced("mean", own)},
        ...                               seeds=sentsweep.Sourced(5, own),
        ...                               grids={"lr": sentsweep.Sourced([1e-5, 3e-5], own)})
        >>> protocol.constants(), protocol.grid("lr")
        ({'pooling': 'mean'}, [1e-05, 3e-05])
    """

    settings: Mapping[str, Sourced]
    seeds: Sourced
    grids: Mapping[str, Sourced] = field(default_factory=dict)
    method_settings: Mapping[str, Mapping[str, Sourced]] = field(default_factory=dict)
    quick: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def constants(self) -> dict[str, Any]:
        """The fixed settings' values, as a trial config holds them."""
        return {name: item.value for name, item in self.settings.items()}

    def grid(self, axis: str) -> list:
        return list(self.grids[axis].value)

    def settings_of(self, method: str) -> dict[str, Any]:
        """The values `method`'s trials take on top of the fixed settings."""
        return {name: item.value for name, item in self.method_settings.get(method, {}).items()}


def sourced(source: Source, **values: Any) -> dict[str, Sourced]:
    """Several settings from one source: `sourced(cited(TSDAE, "App. B"), lr=3e-5, batch_size=8)`."""
    return {name: Sourced(value, source) for name, value in values.items()}


def project_protocol(settings: Mapping[str, Any], quick: Mapping[str, Any] | None = None,
                     note: str = "") -> Protocol:
    """A protocol whose every value is the project's own choice (a benchmark's or a test's sweep); `seeds` from
    `settings`."""
    values = dict(settings)
    source = project_choice(note)
    seeds = Sourced(values.pop("seeds", 1), source)
    return Protocol(settings={name: Sourced(value, source) for name, value in values.items()}, seeds=seeds,
                    quick=dict(quick or {}))


def with_method_settings(config: dict, method_settings: Mapping[str, Mapping[str, Any]], axes=()) -> dict:
    """`config` with its method's protocol settings applied, except those an axis sweeps."""
    extra = method_settings.get(config.get("method"), {})
    return config | {key: value for key, value in extra.items() if key not in axes}
