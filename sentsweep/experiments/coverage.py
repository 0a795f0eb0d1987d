"""`sentsweep list --coverage`: every result table and figure of the source documents (`seed_exhibits.EXHIBITS`)
with the sweeps that re-run it, its reproduction targets, and, where no sweep targets it, the reason.

A result's targets are the published values (`SweepDefinition.published`, `published_results`) and the orderings
(`SweepDefinition.orderings`: findings stated in words) of every experiment whose source cites that document and
names the table or figure in its place ("§6, Table 2 (...)", "App. A, Tables 6 (ratio 0.6) and 7 (CLS)", "§6, Figs. 2
and 5"). A result is counted "with targets" where some experiment declares one, "sweep without targets" where only
the sweeps its entry names re-run it, and "no sweep" otherwise; the last two carry the entry's reason, a targeted one
what of it is not targeted where its entry says.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from sentsweep.experiments.seed_exhibits import EXHIBITS, RESULT, SeedExhibit
from sentsweep.references import SOURCE_DOCUMENTS
from sentsweep.sweep import SweepDefinition

WITH_TARGETS, WITHOUT_TARGETS, NO_SWEEP = "with targets", "sweep without targets", "no sweep"
STATUSES = (WITH_TARGETS, WITHOUT_TARGETS, NO_SWEEP)
# "Table 2", "Tables 6 (ratio 0.6) and 7 (CLS)", "Fig. 4", "Figures 4.1-4.3"
PLACES = re.compile(r"\b(?P<word>Tables?|Figs?\.|Figures?)\s+(?P<numbers>\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?"
                    r"(?:(?:\s*\([^)]*\))?\s*(?:,|and)\s*\d+(?:\.\d+)?(?![\w%]))*)")


def places_named(where: str) -> set[str]:
    """The tables and figures a citation's place names, as "Table 6" / "Figure 4.1"."""
    found = set()
    for match in PLACES.finditer(where):
        word = "Table" if match["word"].startswith("Table") else "Figure"
        for piece in re.split(r",|\band\b|\([^)]*\)", match["numbers"]):
            bounds = re.findall(r"\d+(?:\.\d+)?", piece)
            if len(bounds) == 2 and re.search(r"[-–]", piece):
                (major, _, first), (_, _, last) = (bound.rpartition(".") for bound in bounds)
                found |= {f"{word} {major + '.' if major else ''}{n}" for n in range(int(first), int(last) + 1)}
            else:
                found |= {f"{word} {bound}" for bound in bounds}
    return found


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


@dataclass(frozen=True)
class Coverage:
    """A result of a document: its entry, the experiments re-running it ({name: number of published values citing
    it}), the orderings citing it ({name: number}), and its status (one of STATUSES)."""

    exhibit: SeedExhibit
    sweeps: dict[str, int]
    orderings: dict[str, int] = field(default_factory=dict)

    @property
    def targets(self) -> int:
        return sum(self.sweeps.values()) + sum(self.orderings.values())

    def sweeps_text(self) -> str:
        """"tsdae_main (24)", "sts_distractors (6 orderings)": each sweep with what of it cites the result."""
        parts = []
        for name, count in self.sweeps.items():
            counted = ([f"{count}"] if count else []) + (
                [plural(self.orderings[name], "ordering")] if self.orderings.get(name) else [])
            parts.append(f"{name} ({', '.join(counted)})" if counted else name)
        return ", ".join(parts)

    def targets_text(self) -> str:
        """"24 targets", "6 orderings", "3 targets, 2 orderings"."""
        values, orderings = sum(self.sweeps.values()), sum(self.orderings.values())
        return ", ".join(text for text in (f"{values} targets" if values else "",
                                           plural(orderings, "ordering") if orderings else "") if text)

    @property
    def status(self) -> str:
        return WITH_TARGETS if self.targets else WITHOUT_TARGETS if self.sweeps else NO_SWEEP


def coverage(definitions: dict[str, SweepDefinition]) -> list[Coverage]:
    """Every result of `EXHIBITS` against the experiments `definitions` ({name: definition})."""
    cited: Counter = Counter()
    ordered: Counter = Counter()
    for name, definition in definitions.items():
        for counter, targets in ((cited, (*definition.published, *definition.published_results)),
                                 (ordered, definition.orderings)):
            for target in targets:
                reference = getattr(target.source, "reference", None)
                for place in places_named(getattr(target.source, "where", "")) if reference else ():
                    counter[(reference.label, place, name)] += 1
    found = []
    for exhibit in EXHIBITS:
        if exhibit.kind != RESULT:
            continue
        sweeps = {name: 0 for name in exhibit.sweeps}
        sweeps |= {name: count for (label, place, name), count in cited.items()
                   if label == exhibit.document.label and place == exhibit.place}
        orderings = {name: count for (label, place, name), count in ordered.items()
                     if label == exhibit.document.label and place == exhibit.place}
        sweeps |= {name: sweeps.get(name, 0) for name in orderings}
        found.append(Coverage(exhibit, sweeps, orderings))
    return found


def coverage_lines(items: Iterable[Coverage]) -> list[str]:
    """The listing: each document's results with their sweeps and targets or reason, then the counts."""
    items = list(items)
    lines = []
    for document in SOURCE_DOCUMENTS:
        own = [item for item in items if item.exhibit.document == document]
        others = Counter(exhibit.kind for exhibit in EXHIBITS if exhibit.document == document
                         and exhibit.kind != RESULT)
        lines.append(f"{document.label}: {len(own)} result tables and figures"
                     + (f" ({', '.join(f'{n} {kind}' for kind, n in sorted(others.items()))} not results)"
                        if others else ""))
        for item in own:
            sweeps = item.sweeps_text()
            if item.status == WITH_TARGETS:
                text = f"{item.targets_text()}: {sweeps}" + (f"; {item.exhibit.reason}" if item.exhibit.reason else "")
            elif item.status == WITHOUT_TARGETS:
                text = f"sweep without targets: {sweeps}; {item.exhibit.reason}"
            else:
                text = f"no sweep: {item.exhibit.reason}"
            lines.append(f"  {item.exhibit.place:<12}{text}")
    counts = Counter(item.status for item in items)
    lines.append(f"\n{len(items)} result tables and figures: "
                 + ", ".join(f"{counts[status]} {status}" for status in STATUSES) + " (each with its reason)")
    return lines
