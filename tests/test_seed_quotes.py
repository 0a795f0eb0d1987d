"""Every quote a citation makes can be checked: each quote ("...") in a `cited(work, where, note)` of sentsweep's
code stands in the seed it names, verbatim up to layout (whitespace, quote marks, dashes, ligatures, line-end
hyphenation, markdown and inline-math markup). A quote is checked against the last seed named ("000" ... "004")
before it in the place and note, else against the cited work; one in a `project_choice(note)` (what the seeds say
instead) against the seed its note names before it, and fails where the note names none.

The citations are found by reading every module of `sentsweep` with `ast`: each call of `cited` or
`project_choice` is one citation, wherever it stands (a settings field, a protocol, a module constant), and its
arguments are evaluated in the module's namespace. A citation of a seed whose note cannot be evaluated there (it
depends on a function's variables) fails: its quote could not be checked.

The seeds are the five documents in `../shared/seeds/` (next to the repository, as in CI; `SENTSWEEP_SEEDS_DIR`
names another folder). Where that folder is absent, the tests that need it skip and say so. Citations of works
that are not seeds (the sentence-transformers library, published papers) are not in that folder, so their
quotes cannot be checked here: those are skipped, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from sentsweep import experiments, references
from sentsweep.references import (
    REPORT_TSDAE_GPL,
    THESIS_MALMBERG_2021,
    THESIS_REIML_2023,
    THESIS_WANG_2022,
    TSDAE,
    Reference,
)
from sentsweep.settings import Source

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "sentsweep"
SEEDS = (THESIS_REIML_2023, THESIS_WANG_2022, TSDAE, THESIS_MALMBERG_2021, REPORT_TSDAE_GPL)

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


def normalised(text: str) -> str:
    """`text` with ligatures and other compatibility characters spelled out, curly quote marks and dashes made
    plain, markup dropped (`$` around math, code backticks, `*` emphasis) and math commands written as their
    symbols, a word hyphenated at a line end joined, and every run of whitespace one space."""
    text = unicodedata.normalize("NFKC", text).translate(MARKS)
    text = MATH_COMMAND.sub(lambda command: MATH[command.group()], text)
    text = re.sub(r"(?<=[a-z])-[ \t]*\n\s*(?=[a-z])", "", text)
    return re.sub(r"\s+", " ", text).strip()


@cache
def seed_text(reference: Reference) -> str:
    """The normalised text of seed `reference`: the one file of the seeds folder named by its number."""
    files = sorted(seeds_dir().glob(f"{reference.label}_*.txt"))
    assert len(files) == 1, f"seed {reference.label}: expected one file {reference.label}_*.txt, found {files}"
    return normalised(files[0].read_text(encoding="utf-8"))


def holds(text: str, quote: str) -> bool:
    """Whether normalised `text` holds `quote`: its pieces between elisions ("...") in order, each elision
    standing for at most `ELIDED` characters."""
    pieces = [re.escape(piece) for piece in ELISION.split(normalised(quote)) if piece]
    return re.search(f".{{0,{ELIDED}}}?".join(pieces), text) is not None


@dataclass(frozen=True)
class Citation:
    """One call of `cited` or `project_choice` in sentsweep's code, its arguments evaluated (`text` None: it
    cannot be): `reference` the cited work (None for a project choice), `text` its place and note."""

    place: str  # path:line
    reference: Reference | None
    text: str | None

    def quotes(self) -> list[tuple[str, Reference | None]]:
        """Each quote ("...") of the text, with the seed it quotes: the last seed named ("000" ... "004") before
        it in the text, else the cited work."""
        found = []
        for quote in QUOTE.finditer(self.text or ""):
            named = [SEED_BY_LABEL[label.group()] for label in SEED_LABEL.finditer(self.text, 0, quote.start())]
            found.append((quote.group(1), named[-1] if named else self.reference))
        return found


SEED_BY_LABEL = {seed.label: seed for seed in SEEDS}
SEED_LABEL = re.compile(r"(?<![\w.])(?:" + "|".join(SEED_BY_LABEL) + r")(?![\w.])")


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
        return Citation(place, None, _evaluated(_argument(call, 0, "note"), namespace, ""))
    reference = _evaluated(_argument(call, 0, "reference"), namespace)
    assert isinstance(reference, Reference), f"{place}: the cited reference cannot be resolved"
    # A place a function passes on (a published value's table) is checked where it is made: `published_citations`.
    where = _evaluated(_argument(call, 1, "where"), namespace, "") or ""
    note = _evaluated(_argument(call, 2, "note"), namespace, "")
    return Citation(place, reference, None if note is None else f"{where} {note}")


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
    """The sources of every experiment's published values (the reproduction targets its report checks)."""
    found = []
    for info in pkgutil.iter_modules(experiments.__path__):
        definition = getattr(importlib.import_module(f"{experiments.__name__}.{info.name}"), "DEFINITION", None)
        for index, value in enumerate(getattr(definition, "published", ())):
            if isinstance(value.source, Source) and value.source.reference is not None:
                found.append(Citation(f"sentsweep/experiments/{info.name}.py:DEFINITION.published[{index}]",
                                      value.source.reference, f"{value.source.where} {value.source.note}"))
    return found


CITATIONS = all_citations() + published_citations()


def needs_seeds():
    if not seeds_dir().is_dir():
        pytest.skip(f"the seed documents are not at {seeds_dir()} (../shared/seeds/ beside the repository in CI; "
                    "SENTSWEEP_SEEDS_DIR names another folder): quotes cannot be checked")


@pytest.mark.parametrize("citation", CITATIONS, ids=lambda citation: citation.place)
def test_every_quote_stands_in_the_seed_it_cites(citation):
    if citation.reference is not None and citation.reference not in SEEDS:
        pytest.skip(f"{citation.reference.label} is not one of the seeds, so its quotes cannot be checked here")
    if citation.text is None:
        assert citation.reference is None, (
            f"{citation.place}: this citation of {citation.reference.label} depends on a function's variables, so "
            "its quotes cannot be checked; give it a place and note of its own")
        pytest.skip("a project choice whose note a function passes on: its quotes stand where the note is written")
    needs_seeds()
    wrong = []
    for quote, seed in citation.quotes():
        if seed is None:
            wrong.append(f'"{quote}" names no seed before it (a project choice quotes the seed its note names)')
        elif not holds(seed_text(seed), quote):
            elsewhere = [other.label for other in SEEDS if holds(seed_text(other), quote)]
            wrong.append(f'"{quote}" is not in {seed.label}'
                         + (f" (it stands in {', '.join(elsewhere)})" if elsewhere else ""))
    assert not wrong, f"{citation.place}: " + "; ".join(wrong)


def test_the_citations_are_found_and_quote_every_seed():
    """The reading of the code finds the citations (a broken search would pass every quote test vacuously)."""
    quoted = {seed for citation in CITATIONS for _, seed in citation.quotes()}
    assert quoted >= set(SEEDS)
    assert sum(citation.reference is None for citation in CITATIONS) > 50
    assert sum(citation.reference is not None for citation in CITATIONS) > 100
    assert any(".published[" in citation.place for citation in CITATIONS)


def test_every_numbered_reference_is_a_seed_with_its_file():
    """A reference numbered like the seed files is one of `SEEDS`, so its citations are checked, not skipped."""
    numbered = {value for value in vars(references).values()
                if isinstance(value, Reference) and value.label.isdigit()}
    assert numbered == set(SEEDS)
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
