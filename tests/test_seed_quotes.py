"""Every quote a citation makes can be checked, in the place it names, and every published value in its table.

Each quote ("...") in a `cited(work, where, note)` of sentsweep's code stands, verbatim up to layout (whitespace,
quote marks, dashes, ligatures, line-end hyphenation, markdown and inline-math markup), in the seed it names and
within the place of that seed it names: a section ("§5.2"), an appendix ("App. B"), a table, a figure, a footnote
("fn. 8"), an equation or a titled section ("GPL"; `tests/helpers/seed_documents.py` says what each spans). A quote is
checked against the last seed named by its label (`Reference.label`: "Reiml 2023", "TSDAE", ...) before it in the
place and note, outside quotes, else against the cited work; and within the places named after that seed and before
the quote (those since the quote before it, else the same as that quote's), else within the citation's `where`. One in
a `project_choice(note)` (what the seeds say instead) is checked the same way against the seed its note names before
it, and fails where the note names none. A quote of a seed that names no place of it fails: it could not be checked.

Every published value (`PublishedValue` of an experiment's `published`, `PublishedSweepValue` of its
`published_results`) is printed in the table its source names ("Table 6.10", "Tables 6.12-6.13": one of them);
a value its source says stands in no table ("text after Table 7 (in no table)") in the section named.

The citations are found by reading every module of `sentsweep` with `ast`: each call of `cited` or
`project_choice` is one citation, wherever it stands (a settings field, a protocol, a module constant), and its
arguments are evaluated in the module's namespace. A citation of a seed whose note cannot be evaluated there (it
depends on a function's variables) fails: its quote could not be checked.

The seeds are the five source documents (`references.SOURCE_DOCUMENTS`), read from their files in `../shared/seeds/`
(next to the repository, as in CI; `SENTSWEEP_SEEDS_DIR` names another folder), each file named by the number
`SEED_FILES` gives the document. Where that folder is absent, every test that needs it FAILS, unless
`SENTSWEEP_NO_SEEDS=1` says the checkout has no seeds on purpose: then those tests skip, and the run ends with a
warning that the quotes and published values were not checked. Citations of works that are not seeds (the
sentence-transformers library, published papers) are not in that folder, so their quotes cannot be checked here: those
are skipped, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from sentsweep import experiments, references
from sentsweep.references import (
    REPORT_TSDAE_GPL,
    SOURCE_DOCUMENTS,
    THESIS_MALMBERG_2021,
    THESIS_REIML_2023,
    THESIS_WANG_2022,
    TSDAE,
    Reference,
)
from sentsweep.settings import Source
from tests.helpers.seed_documents import Place, SeedDocument, numbers_of, places_in

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "sentsweep"
# The seed file of each source document: ../shared/seeds/<number>_<digest>.txt.
SEED_FILES = {THESIS_REIML_2023: "000", THESIS_WANG_2022: "001", TSDAE: "002", THESIS_MALMBERG_2021: "003",
              REPORT_TSDAE_GPL: "004"}
SEEDS = tuple(SEED_FILES)
NO_SEEDS_ENV = "SENTSWEEP_NO_SEEDS"  # "1": this checkout has no seeds on purpose (the checks skip, with a warning)

QUOTE = re.compile(r'"([^"]+)"')
ELISION = re.compile(r"\s*(?:\.\.\.|…)\s*")
ELIDED = 1000  # the most characters an elision stands for: a quote's pieces lie in one passage of the seed
MARKS = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-", "‑": "-",
                       "−": "-", "$": None, "`": None, "*": None})
# Inline math as a reader sees it: the symbols the seeds' LaTeX spells as commands.
MATH = {r"\in": "∈", r"\alpha": "α", r"\tau": "τ", r"\pm": "±", r"\times": "×", r"\{": "{", r"\}": "}"}
MATH_COMMAND = re.compile("|".join(re.escape(command) + (r"\b" if command[-1].isalpha() else "") for command in MATH))


def seeds_dir() -> Path:
    return Path(os.environ.get("SENTSWEEP_SEEDS_DIR") or REPO_ROOT.parent / "shared" / "seeds")


def seeds_opted_out() -> bool:
    return os.environ.get(NO_SEEDS_ENV) == "1"


if not seeds_dir().is_dir() and seeds_opted_out():  # once, at collection: shown in pytest's warnings summary
    warnings.warn(f"{NO_SEEDS_ENV}=1 and no seed documents at {seeds_dir()}: the quotes of the code's citations and "
                  "the published values of its reproduction targets are NOT checked against their seeds",
                  UserWarning, stacklevel=1)


def normalised(text: str) -> str:
    """`text` with ligatures and other compatibility characters spelled out, curly quote marks and dashes made
    plain, markup dropped (`$` around math, code backticks, `*` emphasis) and math commands written as their
    symbols, a word hyphenated at a line end joined, and every run of whitespace one space."""
    text = unicodedata.normalize("NFKC", text).translate(MARKS)
    text = MATH_COMMAND.sub(lambda command: MATH[command.group()], text)
    text = re.sub(r"(?<=[a-z])-[ \t]*\n\s*(?=[a-z])", "", text)
    return re.sub(r"\s+", " ", text).strip()


def seed_file(reference: Reference) -> Path:
    number = SEED_FILES[reference]
    files = sorted(seeds_dir().glob(f"{number}_*.txt"))
    assert len(files) == 1, f"seed {reference.label}: expected one file {number}_*.txt, found {files}"
    return files[0]


@cache
def seed_text(reference: Reference) -> str:
    """The normalised text of seed `reference`: the one file of the seeds folder named by its number in
    `SEED_FILES`."""
    return normalised(seed_file(reference).read_text(encoding="utf-8"))


@cache
def seed_document(reference: Reference) -> SeedDocument:
    return SeedDocument(seed_file(reference).read_text(encoding="utf-8"))


def holds(text: str, quote: str) -> bool:
    """Whether normalised `text` holds `quote`: its pieces between elisions ("...") in order, each elision
    standing for at most `ELIDED` characters."""
    pieces = [re.escape(piece) for piece in ELISION.split(normalised(quote)) if piece]
    return re.search(f".{{0,{ELIDED}}}?".join(pieces), text) is not None


def place_texts(reference: Reference, places: list[Place]) -> dict[Place, list[str]]:
    """{place: the normalised text of each of its spans} in seed `reference`."""
    document = seed_document(reference)
    return {place: [normalised(text) for text in document.texts_of(place)] for place in places}


@dataclass(frozen=True)
class Quote:
    """A quote of a citation: its text, the seed it quotes (None: it names none) and the places of that seed it
    stands in (one of them)."""

    text: str
    seed: Reference | None
    places: tuple[Place, ...]


@dataclass(frozen=True)
class Citation:
    """One call of `cited` or `project_choice` in sentsweep's code, its arguments evaluated (`note` None: it
    cannot be): `reference` the cited work (None for a project choice), `where` its place, `note` its note."""

    place: str  # path:line
    reference: Reference | None
    where: str
    note: str | None
    value: float | None = None  # a published value's number
    named_places: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str | None:
        return None if self.note is None else f"{self.where} {self.note}".strip()

    def where_places(self) -> list[Place]:
        """The places `where` names, and its pieces that name a titled section of the cited seed ("GPL")."""
        places = [place for _, _, place in places_in(self.where)]
        for piece in re.split(r"[,;]", self.where):
            if piece.strip() and not places_in(piece) and self.reference in SEEDS and seeds_dir().is_dir():
                named = seed_document(self.reference).named_place(piece)
                places += [named] if named else []
        return places

    def quotes(self) -> list[Quote]:
        """Each quote ("...") of the text with the seed it quotes (the last seed named before it outside a quote,
        else the cited work) and its places: those named after that seed and before the quote (since the quote before
        it; none since then: that quote's), else, for the cited work, the citation's `where`. A seed named again
        while it is the one quoted ("TSDAE App. B trains TSDAE and ...") keeps the places named for it."""
        text = self.text or ""
        quoted = [match.span() for match in QUOTE.finditer(text)]
        named = [match for match in SEED_LABEL.finditer(text)
                 if not any(start < match.start() < end for start, end in quoted)]
        events = sorted([(match.start(), "seed", SEED_BY_LABEL[match.group()]) for match in named]
                        + [(start, "place", place) for start, _, place in places_in(text)]
                        + [(match.start(), "quote", match.group(1)) for match in QUOTE.finditer(text)],
                        key=lambda event: event[0])
        found, seed, places, fresh = [], self.reference, [], True
        for _, kind, item in events:
            if kind == "seed":
                if item is not seed:
                    seed, places, fresh = item, [], True
            elif kind == "place":
                places, fresh = ([*places, item] if fresh else [item]), True
            else:
                inherited = places or (self.where_places() if seed is self.reference else [])
                found.append(Quote(item, seed, tuple(inherited)))
                places, fresh = list(inherited), False
        return found


SEED_BY_LABEL = {seed.label: seed for seed in SEEDS}
# A seed's label, the longest first ("TSDAE+GPL draft" before "TSDAE"); not a method's name ("TSDAE+NM").
SEED_LABEL = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(SEED_BY_LABEL, key=len, reverse=True)))
                        + r")(?![\w+-])")


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _evaluated(node: ast.expr | None, namespace: dict, default=None):
    if node is None:
        return default
    try:
        return eval(compile(ast.Expression(node), "<citation>", "eval"), namespace)  # noqa: S307 (own code)
    except NameError:
        return None


def _citation(call: ast.Call, place: str, namespace: dict) -> Citation:
    if call.func.id == "project_choice":
        return Citation(place, None, "", _evaluated(_argument(call, 0, "note"), namespace, ""))
    reference = _evaluated(_argument(call, 0, "reference"), namespace)
    assert isinstance(reference, Reference), f"{place}: the cited reference cannot be resolved"
    # A place a function passes on (a published value's table) is checked where it is made: `published_citations`.
    where = _evaluated(_argument(call, 1, "where"), namespace, "") or ""
    return Citation(place, reference, where, _evaluated(_argument(call, 2, "note"), namespace, ""))


def all_citations() -> list[Citation]:
    """Every call of `cited` and `project_choice` in the modules of sentsweep, in file and line order."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id in ("cited", "project_choice")]
        if calls:
            namespace = vars(importlib.import_module(".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)))
            found += [_citation(call, f"{path.relative_to(REPO_ROOT)}:{call.lineno}", namespace)
                      for call in sorted(calls, key=lambda node: node.lineno)]
    return found


def published_citations() -> list[Citation]:
    """The sources of every experiment's published values (the reproduction targets its report checks, and the
    results of a whole sweep), each with its value, and of its orderings (findings stated in words, each with its
    quote; no value)."""
    found = []
    for name, module in experiments.experiment_modules().items():
        definition = experiments.get_experiment(name)
        for attribute in ("published", "published_results", "orderings"):
            for index, value in enumerate(getattr(definition, attribute, ())):
                if isinstance(value.source, Source) and value.source.reference is not None:
                    found.append(Citation(f"{module.replace('.', '/')}.py:DEFINITION.{attribute}[{index}]",
                                          value.source.reference, value.source.where, value.source.note,
                                          value=getattr(value, "value", None)))
    return found


CITATIONS = all_citations() + published_citations()
PUBLISHED = [citation for citation in CITATIONS if citation.value is not None]


def needs_seeds():
    """Fail where the seeds folder is absent, unless the checkout opted out (`SENTSWEEP_NO_SEEDS=1`): skip."""
    if seeds_dir().is_dir():
        return
    message = (f"the seed documents are not at {seeds_dir()} (../shared/seeds/ beside the repository, as in CI; "
               "SENTSWEEP_SEEDS_DIR names another folder), so quotes and published values cannot be checked")
    if seeds_opted_out():
        pytest.skip(f"{NO_SEEDS_ENV}=1: {message}")
    pytest.fail(f"{message}; a checkout without the seeds may set {NO_SEEDS_ENV}=1 to skip these checks (with a "
                "warning)", pytrace=False)


def quote_problems(citation: Citation) -> list[str]:
    """What is wrong with each quote of `citation`: not in its seed, in another seed, outside its place."""
    wrong = []
    for quote in citation.quotes():
        seed = quote.seed
        if seed is None:
            wrong.append(f'"{quote.text}" names no seed before it (a project choice quotes the seed its note names)')
        elif not holds(seed_text(seed), quote.text):
            elsewhere = [other.label for other in SEEDS if holds(seed_text(other), quote.text)]
            wrong.append(f'"{quote.text}" is not in {seed.label}'
                         + (f" (it stands in {', '.join(elsewhere)})" if elsewhere else ""))
        elif not quote.places:
            wrong.append(f'"{quote.text}" names no place of {seed.label} (a section, appendix, table, figure or '
                         "footnote) to check it in")
        else:
            texts = place_texts(seed, list(quote.places))
            missing = [str(place) for place, spans in texts.items() if not spans]
            if missing:
                wrong.append(f"{seed.label} has no {', '.join(missing)} (quoted: \"{quote.text}\")")
            elif not any(holds(span, quote.text) for spans in texts.values() for span in spans):
                wrong.append(f'"{quote.text}" is in {seed.label}, but not within '
                             f"{' or '.join(map(str, quote.places))}")
    return wrong


@pytest.mark.parametrize("citation", CITATIONS, ids=lambda citation: citation.place)
def test_every_quote_stands_in_the_place_of_the_seed_it_cites(citation):
    if citation.reference is not None and citation.reference not in SEEDS:
        pytest.skip(f"{citation.reference.label} is not one of the seeds, so its quotes cannot be checked here")
    if citation.note is None:
        assert citation.reference is None, (
            f"{citation.place}: this citation of {citation.reference.label} depends on a function's variables, so "
            "its quotes cannot be checked; give it a place and note of its own")
        pytest.skip("a project choice whose note a function passes on: its quotes stand where the note is written")
    needs_seeds()
    wrong = quote_problems(citation)
    assert not wrong, f"{citation.place}: " + "; ".join(wrong)


def value_places(citation: Citation) -> list[Place]:
    """Where a published value must be printed: the tables its source names; the sections named where the source
    says the value stands in no table, or names no table."""
    places = citation.where_places()
    tables = [place for place in places if place.kind == "table"]
    if tables and "in no table" not in citation.where:
        return tables
    return [place for place in places if place.kind != "table"]


@pytest.mark.parametrize("citation", PUBLISHED, ids=lambda citation: citation.place)
def test_every_published_value_is_printed_in_the_table_it_cites(citation):
    if citation.reference not in SEEDS:
        pytest.skip(f"{citation.reference.label} is not one of the seeds")
    needs_seeds()
    places = value_places(citation)
    assert places, f"{citation.place}: its source {citation.where!r} names no table or section of " \
                   f"{citation.reference.label}"
    texts = place_texts(citation.reference, places)
    missing = [str(place) for place, spans in texts.items() if not spans]
    assert not missing, f"{citation.place}: {citation.reference.label} has no {', '.join(missing)}"
    printed = set().union(*(numbers_of(span) for spans in texts.values() for span in spans))
    assert any(abs(citation.value - number) < 1e-9 for number in printed), (
        f"{citation.place}: {citation.value:g} is not printed in {citation.reference.label} "
        f"{' or '.join(map(str, places))}")


def test_the_citations_are_found_and_quote_every_seed():
    """The reading of the code finds the citations (a broken search would pass every quote test vacuously)."""
    quoted = {quote.seed for citation in CITATIONS for quote in citation.quotes()}
    assert quoted >= set(SEEDS)
    assert sum(citation.reference is None for citation in CITATIONS) > 50
    assert sum(citation.reference is not None for citation in CITATIONS) > 100
    assert sum(".published[" in citation.place for citation in CITATIONS) > 200
    assert any(".published_results[" in citation.place for citation in CITATIONS)
    assert sum(".orderings[" in citation.place and citation.quotes() != [] for citation in CITATIONS) > 10


def test_every_source_document_is_a_seed_with_its_file():
    """Each source document is one of `SEEDS`, so its citations are checked, not skipped; each reference has a
    label of its own (a label names one work in the cards and in the notes the quotes are attributed by)."""
    assert set(SOURCE_DOCUMENTS) == set(SEEDS)
    labels = [value.label for value in vars(references).values() if isinstance(value, Reference)]
    assert len(labels) == len(set(labels)), labels
    needs_seeds()
    for seed in SEEDS:
        assert seed_text(seed)


@pytest.mark.parametrize(("text", "quote", "held"), [
    ("the batch size is 8; the optimizers are AdamW", "the batch size is 8", True),
    ("the batch size is 8; the optimizers are AdamW", "the batch size is 16", False),
    ("the batch size is 8; the optimizers are AdamW", "the batch size ... AdamW", True),
    ("the batch size is 8; the optimizers are AdamW", "AdamW ... the batch size", False),
    ("the batch size is 8;" + " and so on" * 200 + " AdamW", "the batch size ... AdamW", False),
    ("uses $w \\in \\{0.1, 0.01\\}$ and *Feature Cutoff* with `Pyserini`",
     "uses w ∈ {0.1, 0.01} and Feature Cutoff with Pyserini", True),
    ("“deletion” is the best noise type – as said", '"deletion" is the best noise type - as said', True),
    ("the ﬁrst  token\nof the se-\nquence", "the first token of the sequence", True),
    ("a pre-\ntrained model", "a pretrained model", True),
    ("a pre-trained model", "a pretrained model", False),
    ("Results are averaged over 3 random seeds", "results are averaged over 3 random seeds", False),
])
def test_quotes_are_matched_up_to_layout_only(text, quote, held):
    assert holds(normalised(text), quote) is held


# A seed in miniature: numbered sections, an appendix with a table (rows above the caption) and a footnote.
MINIATURE = """1 Introduction

We train for 100K steps.

5 Experiments

5.1 Baselines

The batch size is 8.

5.2 MLM

We keep the learning rate (5e-5).

6 Results

Method AskU. SciDocs
TSDAE 59.4 74.0
MLM 54.3 74.6
Table 2: Average precision. Results are averaged over 5 random seeds.

References

Appendix A Settings

Type Delete Swap
Score 78.33 76.85
Table 5: Results with different noise types
We do not use early-stopping888For SimCSE, the official code stops early. mentioned above.
"""


@pytest.mark.parametrize(("where", "note", "problem"), [
    ("§5.2", '"the learning rate (5e-5)"', None),
    ("§5", '"The batch size is 8"', None),  # §5 holds its subsections
    ("§5.1", '"the learning rate (5e-5)"', "but not within §5.1"),  # a moved section
    ("§6.4", '"the learning rate (5e-5)"', "has no §6.4"),
    ("App. A", '"We do not use early-stopping"; for SimCSE (fn. 8) "the official code stops early"', None),
    ("App. A", '"We do not use early-stopping"; for SimCSE (fn. 8) "We do not use early-stopping"',
     "but not within fn. 8"),
    ("Table 2", '"Results are averaged over 5 random seeds"', None),
    ("§5.1", '"The batch size is 8"; and §1 "for 100K steps"', None),
    ("§5.1", '"The batch size is 8"; and "for 100K steps"', "but not within §5.1"),  # places carry on
    ("", '"The batch size is 8"', "names no place"),
])
def test_a_quote_is_checked_within_the_place_it_names(monkeypatch, where, note, problem):
    monkeypatch.setattr(f"{__name__}.seed_text", lambda reference: normalised(MINIATURE))
    monkeypatch.setattr(f"{__name__}.seed_document", lambda reference: SeedDocument(MINIATURE))
    problems = quote_problems(Citation("miniature", TSDAE, where, note))
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0], problems


@pytest.mark.parametrize(("reference", "note", "seeds"), [
    (TSDAE, '"a" ; Reiml 2023 §5.1 "b"; Wang 2022\'s "c"', [TSDAE, THESIS_REIML_2023, THESIS_WANG_2022]),
    (None, 'TSDAE+GPL draft GPL: "a"; Malmberg 2021 §3.3 "b"', [REPORT_TSDAE_GPL, THESIS_MALMBERG_2021]),
    (THESIS_REIML_2023, 'the row "TSDAE (repr.)" and "b"; TSDAE+NM "c"', [THESIS_REIML_2023] * 3),
    (None, 'TSDAE App. B trains TSDAE with AdamW ("a")', [TSDAE]),
    (None, '"a" names none', [None]),
])
def test_a_quote_is_attributed_to_the_seed_named_before_it(reference, note, seeds):
    """A seed is named by its label, outside quotes; a method's name ("TSDAE+NM") names no seed."""
    quotes = Citation("named", reference, "", note).quotes()
    assert [quote.seed for quote in quotes] == seeds


def test_a_seed_named_again_keeps_its_places():
    """"TSDAE App. B trains TSDAE ...": the quote after the method's name is checked within App. B."""
    [quote] = Citation("named", None, "", 'TSDAE App. B trains TSDAE with AdamW ("a")').quotes()
    assert (quote.seed, [str(place) for place in quote.places]) == (TSDAE, ["App. B"])


@pytest.mark.parametrize(("where", "value", "printed"), [
    ("§6, Table 2 (unsupervised learning)", 59.4, True),
    ("§6, Table 2 (unsupervised learning)", 59.9, False),  # an altered value
    ("App. A, Table 5", 78.33, True),
    ("App. A, Table 5", 59.4, False),  # another table's value
    ("App. A, Tables 2 and 5", 59.4, True),
])
def test_a_published_value_is_checked_in_the_table_it_names(monkeypatch, where, value, printed):
    monkeypatch.setattr(f"{__name__}.seed_document", lambda reference: SeedDocument(MINIATURE))
    citation = Citation("miniature", TSDAE, where, "", value=value)
    texts = place_texts(TSDAE, value_places(citation))
    numbers = set().union(*(numbers_of(span) for spans in texts.values() for span in spans))
    assert (value in numbers) is printed
