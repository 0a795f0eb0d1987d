"""`sentsweep list --coverage`: every result table and figure of the source documents (`seed_exhibits.EXHIBITS`)
with the sweeps that re-run it, its reproduction targets, and, where no sweep targets it, the reason.

A result's targets are the published values (`SweepDefinition.published`, `published_results`) of every
experiment whose source cites that document and names the table or figure in its place ("§6, Table 2 (...)",
"App. A, Tables 6 (ratio 0.6) and 7 (CLS)"). A result is counted "with targets" where some experiment declares
one, "sweep without targets" where only the sweeps its entry names re-run it, and "no sweep" otherwise; the last
two carry the entry's reason, a targeted one what of it is not targeted where its entry says.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Coverage:
    """A result of a document: its entry, the experiments re-running it ({name: number of targets citing it}), and
    its status (one of STATUSES)."""

    exhibit: SeedExhibit
    sweeps: dict[str, int]

    @property
    def targets(self) -> int:
        return sum(self.sweeps.values())

    @property
    def status(self) -> str:
        return WITH_TARGETS if self.targets else WITHOUT_TARGETS if self.sweeps else NO_SWEEP


def coverage(definitions: dict[str, SweepDefinition]) -> list[Coverage]:
    """Every result of `EXHIBITS` against the experiments `definitions` ({name: definition})."""
    cited: Counter = Counter()
    for name, definition in definitions.items():
        for target in (*definition.published, *definition.published_results):
            reference = getattr(target.source, "reference", None)
            for place in places_named(getattr(target.source, "where", "")) if reference else ():
                cited[(reference.label, place, name)] += 1
    found = []
    for exhibit in EXHIBITS:
        if exhibit.kind != RESULT:
            continue
        sweeps = {name: 0 for name in exhibit.sweeps}
        sweeps |= {name: count for (label, place, name), count in cited.items()
                   if label == exhibit.document.label and place == exhibit.place}
        found.append(Coverage(exhibit, sweeps))
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
            sweeps = ", ".join(f"{name} ({count})" if count else name for name, count in item.sweeps.items())
            if item.status == WITH_TARGETS:
                text = f"{item.targets} targets: {sweeps}" + (f"; {item.exhibit.reason}" if item.exhibit.reason else "")
            elif item.status == WITHOUT_TARGETS:
                text = f"sweep without targets: {sweeps}; {item.exhibit.reason}"
            else:
                text = f"no sweep: {item.exhibit.reason}"
            lines.append(f"  {item.exhibit.place:<12}{text}")
    counts = Counter(item.status for item in items)
    lines.append(f"\n{len(items)} result tables and figures: "
                 + ", ".join(f"{counts[status]} {status}" for status in STATUSES) + " (each with its reason)")
    return lines
