"""Findings a document states in words about a figure that prints no numbers ("TSDAE outperforms MLM at every
size", "the accuracy increases when more tokens are changed", a crossing of two curves), declared as orderings of
the cells of the sweep's table and checked on its runs.

A `PublishedOrdering` is a finding, its quote and the comparisons it makes: pairs of cells (`Cell`: params and
metric, as a `PublishedValue`'s), the first above the second. `above` and `rising` build the pairs of the usual
findings. `check_ordering` compares each pair's means over seeds (a cell's runs selected as a numeric target's,
`sentsweep.analysis.reproduction.check_target`) and gives a verdict: "met" where every pair whose two cells ran
holds (the first mean strictly above the second), "not met" where one such pair does not, "not run" where no pair
has both cells. `orderings_line` is the line under a stage's table, `orderings_markdown` the section of the target
list, `orderings_card_lines` the `--dry-run` card's section.

    >>> from sentsweep.analysis.orderings import Cell, PublishedOrdering, above
    >>> finding = PublishedOrdering("TSDAE above MLM at 100 and 1,000 labelled pairs",
    ...                             above({"method": "tsdae"}, {"method": "mlm"}, ["best_task_dev"],
    ...                                   [{"sample_size": 100}, {"sample_size": 1000}]),
    ...                             "TSDAE §6, Fig. 2")
    >>> len(finding.pairs), finding.pairs[0][0]
    (2, Cell(params={'method': 'tsdae', 'sample_size': 100}, metric='best_task_dev'))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sentsweep.analysis.reproduction import NOT_RUN, PublishedValue, check_target, value_text
from sentsweep.settings import Source

MET, NOT_MET = "met", "not met"
ORDERING_VERDICTS = (MET, NOT_MET, NOT_RUN)  # in the order the counts are given


@dataclass(frozen=True)
class Cell:
    """A cell of a sweep's table: the runs whose params equal `params` (as `PublishedValue.params`), in column
    `metric`."""

    params: Mapping[str, Any]
    metric: str

    def label(self) -> str:
        cell = ", ".join(f"{name}={value_text(value)}" for name, value in self.params.items())
        return f"{cell} ({self.metric})" if cell else self.metric


Pair = tuple[Cell, Cell]  # (higher, lower)


@dataclass(frozen=True)
class PublishedOrdering:
    """A finding stated in words about a figure, as the comparisons of cells it makes.

    `finding`: the ordering in the project's words ("TF-IDF (full vocabulary) above both SBERT models at 1-5
    changed words, all pairs"). `pairs`: the comparisons, each (higher, lower): the first cell's mean over its
    seeds strictly above the second's. A chain A > B > C is (A, B), (B, C); "A above each of B and C" is (A, B),
    (A, C); a crossing is the pairs of one order on one side of the crossing point and of the other order on the
    other side; a monotone trend is the chain of an axis' consecutive values (`rising`). `source`: where the
    document states it, with its words quoted verbatim in the note (`cited(TSDAE, "§6, Fig. 2", '"TSDAE
    outperforms MLM by a significant margin"')`; tests/test_seed_quotes.py checks the quote in the seed).

    Examples:
        The TSDAE paper's §6 on Figure 2, for CQADupStack at two labelled sizes:

        >>> from sentsweep.references import TSDAE
        >>> from sentsweep.settings import cited
        >>> finding = PublishedOrdering(
        ...     "TSDAE above MLM on CQADupStack", above({"method": "tsdae"}, {"method": "mlm"}, ["cqadupstack_map"],
        ...                                             [{"sample_size": 100}, {"sample_size": 1000}]),
        ...     cited(TSDAE, "§6, Fig. 2", '"TSDAE outperforms MLM by a significant margin"'))
        >>> [(higher.params["method"], lower.params["sample_size"]) for higher, lower in finding.pairs]
        [('tsdae', 100), ('tsdae', 1000)]
    """

    finding: str
    pairs: tuple[Pair, ...]
    source: Source | str

    def cells(self) -> list[Cell]:
        """Every cell the pairs compare, each once (by its label), in the order of first mention."""
        found: dict[str, Cell] = {}
        for pair in self.pairs:
            for cell in pair:
                found.setdefault(cell.label(), cell)
        return list(found.values())


def above(higher: Mapping[str, Any], lower: Mapping[str, Any], metrics: Sequence[str],
          at: Sequence[Mapping[str, Any]] = ({},)) -> tuple[Pair, ...]:
    """The pairs "`higher` above `lower`" in each of `metrics` at each point of `at` (params both cells share:
    a size, a target task)."""
    return tuple((Cell({**higher, **point}, metric), Cell({**lower, **point}, metric))
                 for point in at for metric in metrics)


def rising(cells: Sequence[Cell]) -> tuple[Pair, ...]:
    """The pairs of a monotone rise: each cell above the one before it."""
    return tuple((later, earlier) for earlier, later in zip(cells, cells[1:]))


@dataclass(frozen=True)
class PairCheck:
    """One comparison against the runs: each cell's mean over its seeds (nan: the cell did not run)."""

    higher: Cell
    lower: Cell
    higher_mean: float
    lower_mean: float

    @property
    def measured(self) -> bool:
        return not (math.isnan(self.higher_mean) or math.isnan(self.lower_mean))

    @property
    def holds(self) -> bool:
        return self.measured and self.higher_mean > self.lower_mean

    def text(self, digits: int = 2) -> str:
        return (f"{self.higher.label()} {self.higher_mean:.{digits}f} "
                f"{'>' if self.holds else '<='} {self.lower.label()} {self.lower_mean:.{digits}f}")


@dataclass(frozen=True)
class OrderingCheck:
    """An ordering against the runs: each of its pairs' check, and the verdict (see the module docstring)."""

    ordering: PublishedOrdering
    pairs: tuple[PairCheck, ...]

    @property
    def measured(self) -> list[PairCheck]:
        return [pair for pair in self.pairs if pair.measured]

    @property
    def failed(self) -> list[PairCheck]:
        return [pair for pair in self.measured if not pair.holds]

    @property
    def verdict(self) -> str:
        return NOT_RUN if not self.measured else NOT_MET if self.failed else MET

    def counts(self) -> str:
        """"4 of 6 comparisons hold (2 not run)"."""
        measured, held = len(self.measured), len(self.measured) - len(self.failed)
        left = len(self.pairs) - measured
        return f"{held} of {measured} comparisons hold" + (f" ({left} not run)" if left else "")


def cell_mean(runs: pd.DataFrame, cell: Cell) -> float:
    """The mean over seeds of `cell` among `runs` (finished, not stopped by a race; a seed's last run), nan where
    none ran with its metric."""
    return check_target(runs, PublishedValue(cell.params, cell.metric, math.nan, "")).mean


def check_ordering(runs: pd.DataFrame, ordering: PublishedOrdering) -> OrderingCheck:
    """`ordering` against `runs` (a sweep's trial runs, `sentsweep.analysis.runs.fetch_trial_runs`' frame)."""
    means = {cell.label(): cell_mean(runs, cell) for cell in ordering.cells()}
    return OrderingCheck(ordering, tuple(PairCheck(higher, lower, means[higher.label()], means[lower.label()])
                                         for higher, lower in ordering.pairs))


def place_of(source: Source | str) -> str:
    """A source without its note: "TSDAE §6, Figs. 2 and 5" (the line names the place; the list quotes it)."""
    if isinstance(source, Source) and source.reference is not None:
        return f"{source.reference.label} {source.where}".strip()
    return str(source)


def orderings_line(checks: Sequence[OrderingCheck], declared: int) -> str:
    """One line on the orderings `checks` (those with a cell in a stage) out of the sweep's `declared`: how many
    are met, not met (each named with its place) and not run yet (a cell of a later stage, a cell outside the
    run's grid)."""
    if not checks:
        return f"Orderings stated in words: none of the sweep's {declared} compares cells of this stage."
    counts = {verdict: sum(check.verdict == verdict for check in checks) for verdict in ORDERING_VERDICTS}
    of = f" of the sweep's {declared}" if declared != len(checks) else ""
    failed = "; ".join(f"{check.ordering.finding} ({place_of(check.ordering.source)})" for check in checks
                       if check.verdict == NOT_MET)
    return (f"Orderings stated in words: {len(checks)}{of} compare cells of this stage: "
            + ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
            + (f"; not met: {failed}" if failed else "") + ".")


def orderings_markdown(checks: Sequence[OrderingCheck], digits: int = 2,
                       heading: str = "## Orderings stated in words") -> str:
    """The target list's section: a row per ordering (finding, comparisons held, verdict, source), then the
    comparisons that fail."""
    lines = [heading, "", "Each finding a document states in words about a figure, checked as an ordering of the "
             "table's cells: met where every comparison whose two cells ran holds (means over seeds, the first "
             "strictly above the second).", "", "| finding | comparisons | verdict | source |", "|---|---|---|---|"]
    lines += [f"| {check.ordering.finding} | {check.counts()} | {check.verdict} | {check.ordering.source} |"
              for check in checks]
    failures = [f"- {check.ordering.finding}: " + "; ".join(pair.text(digits) for pair in check.failed)
                for check in checks if check.failed]
    if failures:
        lines += ["", "Comparisons that fail:", *failures]
    return "\n".join(lines)


def orderings_card_lines(orderings: Sequence[PublishedOrdering]) -> list[str]:
    """The `--dry-run` card's section on the orderings a sweep checks after its stages ([] where none)."""
    if not orderings:
        return []
    lines = [f"## Findings checked as orderings ({len(orderings)})", "",
             "Findings the documents state in words about a figure, each checked after the stages as an ordering "
             "of the table's cells (met where every comparison whose two cells ran holds: means over seeds, the "
             "first strictly above the second), printed under the table with the reproduction targets.", "",
             "| finding | comparisons | metrics | source |", "|---|---|---|---|"]
    for ordering in orderings:
        metrics = sorted({cell.metric for cell in ordering.cells()})
        metrics = ", ".join(metrics) if len(metrics) <= 5 else f"{len(metrics)}: {metrics[0]} ... {metrics[-1]}"
        lines.append(f"| {ordering.finding} | {len(ordering.pairs)} | {metrics} | {ordering.source} |")
    return lines
