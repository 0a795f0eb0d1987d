"""The places of a seed document that a citation names, as text: its sections, appendices, tables, figures,
footnotes and equations (for `tests/test_seed_quotes.py`).

A seed is a plain-text rendering of a paper or thesis (`../shared/seeds/NNN_*.txt`). Its headings are lines that
hold only a number and a short title ("5.2 MLM", "# 5.4.1 TSDAE", "#### **2.3.2** RoBERTa"), "Chapter N",
"Appendix X Title", or a terminal heading ("References", "Bibliography", "Acknowledgments"); a document without
numbered headings (TSDAE+GPL draft) has titled ones, short lines standing alone between blank lines ("GPL").

What a place spans:
- `§5.2`: from each heading numbered 5.2 to the next heading that is not inside it (a table of contents' line
  spans one line); `§6` of a thesis starts at "Chapter 6";
- `App. B`: from "Appendix B ..." to the next appendix, chapter or terminal heading;
- `Table 6.10`: its caption paragraph ("Table 6.10: ...") and its rows, the block of lines just above it (the
  seeds mostly print the rows first) up to a blank line, another caption or a heading, or the block below it
  where the one above is a lone line of prose (Malmberg 2021 prints its captions first);
- `Figure 2` / `Fig. 2`: its caption paragraph and the block above it (the panels' labels), as a table's;
- `fn. 8`: the text after footnote 8's marker (the number written three times, "points888For SimCSE"), to the
  end of its paragraph;
- `eq. 3.6`: the section that holds the equation's label "(3.6)";
- a name ("GPL"): the titled section of that name, to the next titled heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

PLACE = re.compile(
    r"§\s?(?P<section>\d+(?:\.\d+)*)"
    r"|(?:App\.|Appendix)\s?(?P<appendix>[A-H])\b"
    r"|\bTables?\s+(?P<tables>\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?"
    r"(?:(?:\s*\([^)]*\))?\s*(?:,|and)\s*\d+(?:\.\d+)?(?![\w%]))*)"
    r"|\b(?:Figs?\.|Figures?)\s+(?P<figures>\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?"
    r"(?:(?:\s*\([^)]*\))?\s*(?:,|and)\s*\d+(?:\.\d+)?(?![\w%]))*)"
    r"|\b(?:fn\.|footnote)\s?(?P<footnote>\d+)"
    r"|\beq\.\s?(?P<equation>\d+(?:\.\d+)*)")
KINDS = ("section", "appendix", "tables", "figures", "footnote", "equation")
TERMINAL = ("References", "Bibliography", "Acknowledgments", "Acknowledgements")
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+([A-Z][^\n]*)$")
NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d])|(?<![\w.])\d+(?:\.\d+)?(?![\d])")


@dataclass(frozen=True)
class Place:
    """A place a citation names: its kind ("section", "appendix", "table", "figure", "footnote", "equation",
    "named") and label ("5.2", "B", "6.10", "GPL")."""

    kind: str
    label: str

    def __str__(self) -> str:
        prefix = {"section": "§", "appendix": "App. ", "table": "Table ", "figure": "Figure ", "footnote": "fn. ",
                  "equation": "eq. ", "named": ""}[self.kind]
        return prefix + self.label


def _numbers_in(text: str) -> list[str]:
    """The table or figure numbers of a place's text: "6.12-6.13" is both, "5-7" is 5, 6 and 7."""
    found = []
    for piece in re.split(r",|\band\b|\([^)]*\)", text):
        bounds = re.findall(r"\d+(?:\.\d+)?", piece)
        if len(bounds) == 2 and re.search(r"[-–]", piece):
            (first_major, _, first), (last_major, _, last) = (bound.rpartition(".") for bound in bounds)
            if first_major == last_major and int(first) <= int(last):
                found += [f"{first_major}.{n}" if first_major else str(n) for n in range(int(first), int(last) + 1)]
                continue
        found += bounds
    return found


def places_in(text: str) -> list[tuple[int, int, Place]]:
    """(start, end, place) of every place named in `text`, in order."""
    found = []
    for match in PLACE.finditer(text):
        kind = next(kind for kind in KINDS if match.group(kind) is not None)
        value = match.group(kind)
        if kind in ("tables", "figures"):
            found += [(match.start(), match.end(), Place(kind[:-1], number)) for number in _numbers_in(value)]
        else:
            found.append((match.start(), match.end(), Place(kind, value)))
    return found


def _stripped(line: str) -> str:
    """A line without markdown's heading marks and emphasis."""
    return re.sub(r"\s+", " ", line.replace("*", "").lstrip("#")).strip()


@dataclass(frozen=True)
class Heading:
    line: int
    kind: str  # "numbered", "chapter", "appendix", "terminal", "titled"
    label: str


class SeedDocument:
    """A seed's raw text, its headings, and the text of each place it has (`text_of`)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    @cached_property
    def headings(self) -> list[Heading]:
        found = []
        for index, line in enumerate(self.lines):
            text = _stripped(line)
            if not text or len(text) > 90:
                continue
            if match := re.fullmatch(r"Chapter (\d+)", text):
                found.append(Heading(index, "chapter", match.group(1)))
            elif match := re.match(r"Appendix ([A-H])\b", text):
                found.append(Heading(index, "appendix", match.group(1)))
            elif text in TERMINAL:
                found.append(Heading(index, "terminal", text))
            elif (match := NUMBERED.match(text)) and self._is_numbered_heading(match):
                found.append(Heading(index, "numbered", match.group(1)))
        if not any(heading.kind == "numbered" for heading in found):
            found += [Heading(index, "titled", _stripped(line)) for index, line in enumerate(self.lines)
                      if self._is_titled_heading(index)]
            found.sort(key=lambda heading: heading.line)
        return found

    @staticmethod
    def _is_numbered_heading(match: re.Match) -> bool:
        number, title = match.groups()
        if int(number.split(".")[0]) > 20 or title.endswith((".", ",", ":")):
            return False
        return "." in number or len(title.split()) <= 6

    def _is_titled_heading(self, index: int) -> bool:
        """A short line alone between blank lines, without a sentence's end ("GPL", "Testing approach")."""
        text = self.lines[index].strip()
        above = index == 0 or not self.lines[index - 1].strip()
        below = index + 1 >= len(self.lines) or not self.lines[index + 1].strip()
        return bool(text) and above and below and len(text.split()) <= 4 and not text.endswith((".", ",", ":"))

    def _section_spans(self, label: str) -> list[tuple[int, int]]:
        spans = []
        headings = self.headings
        for position, heading in enumerate(headings):
            starts = heading.label == label and (heading.kind == "numbered" or (
                heading.kind == "chapter" and "." not in label))
            if not starts:
                continue
            end = next((later.line for later in headings[position + 1:]
                        if not (later.kind == "numbered" and later.label.startswith(label + "."))),
                       len(self.lines))
            spans.append((heading.line, end))
        return spans

    def _appendix_spans(self, label: str) -> list[tuple[int, int]]:
        headings = self.headings
        return [(heading.line, next((later.line for later in headings[position + 1:]
                                     if later.kind in ("appendix", "chapter", "terminal")), len(self.lines)))
                for position, heading in enumerate(headings) if heading.kind == "appendix" and heading.label == label]

    def _titled_spans(self, label: str) -> list[tuple[int, int]]:
        headings = self.headings
        return [(heading.line, next((later.line for later in headings[position + 1:]), len(self.lines)))
                for position, heading in enumerate(headings)
                if heading.kind in ("titled", "terminal") and heading.label == label]

    def _is_caption(self, index: int, kind: str | None = None, label: str | None = None) -> bool:
        text = _stripped(self.lines[index])
        kinds = {"table": "Table", "figure": "Figure"}
        words = [kinds[kind]] if kind else list(kinds.values())
        number = re.escape(label) if label else r"\d+(?:\.\d+)?"
        return any(re.match(rf"{word}\s+{number}\s*[:.]", text) for word in words)

    def _block(self, start: int, step: int) -> tuple[int, int]:
        """The lines of the block next to line `start` in direction `step` (-1 above, 1 below), blank lines
        between skipped, up to a blank line, a caption or a heading: (first, last + 1)."""
        heading_lines = {heading.line for heading in self.headings}
        index = start + step
        while 0 <= index < len(self.lines) and not self.lines[index].strip():
            index += step
        first = index
        while 0 <= index < len(self.lines) and self.lines[index].strip() and not self._is_caption(index) and \
                index not in heading_lines:
            index += step
        return (index + 1, first + 1) if step < 0 else (first, index)

    def _caption_spans(self, kind: str, label: str) -> list[tuple[int, int]]:
        """Each caption of table or figure `label` with its rows: the block above it (the seeds mostly print the
        rows first), or, where that is a lone line (a paragraph of prose), the block below it."""
        spans = []
        for index in range(len(self.lines)):
            if not self._is_caption(index, kind, label):
                continue
            end = index + 1
            while end < len(self.lines) and self.lines[end].strip():
                end += 1
            above, below = self._block(index, -1), self._block(end - 1, 1)
            if above[1] - above[0] >= 2 or below[1] - below[0] < 2:
                spans.append((above[0], end))
            else:
                spans += [(index, end), below]
        return spans

    def _footnote_spans(self, label: str) -> list[tuple[int, int, int]]:
        marker = re.compile(rf"(?<=[^\s\d]){re.escape(label * 3)}(?=\S)")
        return [(index, index + 1, match.end()) for index, line in enumerate(self.lines)
                for match in marker.finditer(line)]

    def _equation_spans(self, label: str) -> list[tuple[int, int]]:
        tagged = [index for index, line in enumerate(self.lines) if f"({label})" in line]
        spans = []
        for index in tagged:
            enclosing = [heading for heading in self.headings if heading.line <= index and heading.kind == "numbered"]
            if enclosing:
                spans += self._section_spans(enclosing[-1].label)
        return spans

    def texts_of(self, place: Place) -> list[str]:
        """The raw text of every span of `place` in the document ([] where it has none)."""
        if place.kind == "footnote":
            return ["\n".join([self.lines[start][column:], *self.lines[start + 1:end]])
                    for start, end, column in self._footnote_spans(place.label)]
        spans = {"section": self._section_spans, "appendix": self._appendix_spans, "named": self._titled_spans,
                 "equation": self._equation_spans,
                 "table": lambda label: self._caption_spans("table", label),
                 "figure": lambda label: self._caption_spans("figure", label)}[place.kind](place.label)
        return ["\n".join(self.lines[start:end]) for start, end in spans]

    def named_place(self, name: str) -> Place | None:
        """The titled section `name`, where the document has one (TSDAE+GPL draft's "GPL")."""
        name = name.strip()
        return Place("named", name) if self._titled_spans(name) else None


def numbers_of(text: str) -> set[float]:
    """Every number printed in `text` ("6,067" is 6067; "71" and "71.0" are one value)."""
    return {float(token.replace(",", "")) for token in NUMBER.findall(text)}


CELL_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# A cell that prints a value: "63.12", "70.1%", "(59.3)", "$83.91 \pm 0.25$"; not a label with a number ("BM25").
VALUE_CELL = re.compile(r"\(?\$?\s*-?\d+(?:\.\d+)?%?\s*(?:\\pm\s*\d+(?:\.\d+)?)?\s*\$?\)?")
# Two values in one cell, "59.4/2.2" (TSDAE Table 4: test performance/training loss): two cells of a row
PAIR_CELL = re.compile(r"\d+(?:\.\d+)?/\d+(?:\.\d+)?")


def _squashed(text: str) -> str:
    """Text without markup, spaces or tabs, lower case: a block's line as the PDF's extraction splits it ("(CLS
    pool\tling)") compared with the words a test names ("CLS pool")."""
    return re.sub(r"[\s*$]", "", text).lower()


@dataclass(frozen=True)
class TableRow:
    block: str  # the last line above it with no number (a block's title: "Unsupervised learning based on ..."), ""
    cells: tuple[str, ...]  # the tab-separated cells; a line without tabs: its words before the first number as one
    # cell, then each number


def _cells(line: str) -> tuple[str, ...]:
    if "\t" in line:
        return tuple(cell.strip() for cell in line.split("\t"))
    words = [piece for word in line.split() for piece in (word.split("/") if PAIR_CELL.fullmatch(word) else [word])]
    first = next((index for index, word in enumerate(words) if VALUE_CELL.fullmatch(word)), len(words))
    return (" ".join(words[:first]), *words[first:])


def cell_value(cell: str) -> float | None:
    """The number a value cell prints ("$83.91 \\pm 0.25$" is 83.91, "(59.3)" 59.3, "70.1%" 70.1); None for a
    label."""
    if not VALUE_CELL.fullmatch(cell.strip()):
        return None
    return float(CELL_NUMBER.search(cell).group())


class SeedTable:
    """A table of a seed as its text prints it: the header (its first line) and the rows below, each under the
    block title above it. A cell is found by its row's label (its first cells, joined by a space), its block (a
    part of the block's title) and its column: a header name (the cell at that name's position in the header) or
    the number of the value in the row (0: its first number), where the header groups columns (TwitterP. over
    TURL, PIT and Avg.) or the extraction split them."""

    def __init__(self, lines: list[str]) -> None:
        self.header = tuple(cell.strip() for cell in lines[0].split("\t")) if "\t" in lines[0] else tuple(
            lines[0].split())
        self.rows: list[TableRow] = []
        block = ""
        for line in lines[1:]:
            cells = _cells(line)
            if not any(cell_value(cell) is not None for cell in cells):
                block = line
            else:
                self.rows.append(TableRow(block, cells))

    def matching_rows(self, row: str, block: str = "") -> list[TableRow]:
        """The rows labelled `row` in the blocks whose title holds `block`: the block of exactly that title alone
        where there is one ("RoBERTa-base", not "DistilRoBERTa-base")."""
        label = " ".join(row.split())
        blocks = [candidate.block for candidate in self.rows if _squashed(block) in _squashed(candidate.block)]
        exact = [title for title in blocks if _squashed(title) == _squashed(block)]
        return [candidate for candidate in self.rows if candidate.block in (exact or blocks)
                and any(" ".join(" ".join(candidate.cells[:count]).split()) == label
                        for count in range(1, len(candidate.cells)))]

    def cell(self, row: str, column: str | int, block: str = "") -> float | None:
        """The value of the cell (None where the table has no such row, column or value); a row that two rows of
        the block match raises `LookupError` (the test must name its block)."""
        rows = self.matching_rows(row, block)
        if len(rows) > 1:
            raise LookupError(f"row {row!r} (block {block!r}) is {len(rows)} rows of the table")
        if not rows:
            return None
        cells = rows[0].cells
        if isinstance(column, int):
            label_cells = next(index for index, cell in enumerate(cells) if cell_value(cell) is not None)
            values = [cell_value(cell) for cell in cells[label_cells:] if cell_value(cell) is not None]
            return values[column] if column < len(values) else None
        names = [" ".join(name.split()) for name in self.header]
        if names.count(column) != 1:
            raise LookupError(f"column {column!r} is {names.count(column)} columns of the header {names}")
        position = names.index(column)
        return cell_value(cells[position]) if position < len(cells) else None


def tables_of(document: SeedDocument, label: str) -> list[SeedTable]:
    """Each printing of table `label` in `document` (its rows: the lines of its caption's block, up to the caption)."""
    found = []
    for text in document.texts_of(Place("table", label)):
        lines = [line for line in text.splitlines() if line.strip()]
        caption = next((index for index, line in enumerate(lines)
                        if re.match(rf"Table\s+{re.escape(label)}\s*[:.]", _stripped(line))), None)
        block = lines if caption is None else lines[:caption]
        block = [line for line in block if not re.match(r"Table\s+\d", _stripped(line))]
        if len(block) >= 2:
            found.append(SeedTable(block))
    return found
