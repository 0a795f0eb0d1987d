"""Every quote a citation makes can be checked: each `cited(seed, where, note)` in sentsweep's code whose note
holds a quote ("...") names a seed whose text holds that quote, verbatim up to whitespace, quote marks, dashes,
ligatures and line-end hyphenation.

The citations are found by reading every module of `sentsweep` with `ast`: each call of `cited` is one citation,
wherever it stands (a settings field, a protocol, a module constant), and its arguments are evaluated in the
module's namespace. A citation of a seed whose note cannot be evaluated there (it depends on a function's
variables) fails: its quote could not be checked.

The seeds are the five documents in `../shared/seeds/` (next to the repository, as in CI; `SENTSWEEP_SEEDS_DIR`
names another folder). Where that folder is absent, the tests that need it skip and say so. Citations of works
that are not seeds (SBERT, SimCSE's paper, the sentence-transformers library) are not in that folder, so their
quotes cannot be checked here: those are skipped, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from sentsweep import references
from sentsweep.references import (
    REPORT_TSDAE_GPL,
    THESIS_MALMBERG_2021,
    THESIS_REIML_2023,
    THESIS_WANG_2022,
    TSDAE,
    Reference,
)

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


def quotes(note: str) -> list[str]:
    """The quotes in a citation's note: the spans between straight double quote marks."""
    return QUOTE.findall(note)


def holds(text: str, quote: str) -> bool:
    """Whether normalised `text` holds `quote`: its pieces between elisions ("...") in order, each elision
    standing for at most `ELIDED` characters."""
    pieces = [re.escape(piece) for piece in ELISION.split(normalised(quote)) if piece]
    return re.search(f".{{0,{ELIDED}}}?".join(pieces), text) is not None


@dataclass(frozen=True)
class Citation:
    """One call of `cited` in sentsweep's code, its arguments evaluated (`note` None: it cannot be)."""

    place: str  # path:line
    reference: Reference
    where: str
    note: str | None


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


def all_citations() -> list[Citation]:
    """Every call of `cited` in the modules of sentsweep, in file and line order."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [node for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cited"]
        if not calls:
            continue
        module = importlib.import_module(".".join(path.relative_to(REPO_ROOT).with_suffix("").parts))
        namespace = vars(module)
        for call in sorted(calls, key=lambda node: node.lineno):
            place = f"{path.relative_to(REPO_ROOT)}:{call.lineno}"
            reference = _evaluated(_argument(call, 0, "reference"), namespace)
            assert isinstance(reference, Reference), f"{place}: the cited reference cannot be resolved"
            found.append(Citation(place, reference, _evaluated(_argument(call, 1, "where"), namespace, ""),
                                  _evaluated(_argument(call, 2, "note"), namespace, "")))
    return found


CITATIONS = all_citations()


def needs_seeds():
    if not seeds_dir().is_dir():
        pytest.skip(f"the seed documents are not at {seeds_dir()} (../shared/seeds/ beside the repository in CI; "
                    "SENTSWEEP_SEEDS_DIR names another folder): quotes cannot be checked")


@pytest.mark.parametrize("citation", CITATIONS, ids=lambda citation: citation.place)
def test_every_quote_stands_in_the_seed_it_cites(citation):
    if citation.reference not in SEEDS:
        pytest.skip(f"{citation.reference.label} is not one of the seeds, so its quotes cannot be checked here")
    assert citation.note is not None, (
        f"{citation.place}: the note of this citation of {citation.reference.label} depends on a function's "
        "variables, so its quotes cannot be checked; give it a note of its own")
    needs_seeds()
    cited = seed_text(citation.reference)
    missing = [quote for quote in quotes(f"{citation.where} {citation.note}") if not holds(cited, quote)]
    elsewhere = {quote: [seed.label for seed in SEEDS if holds(seed_text(seed), quote)] for quote in missing}
    assert not missing, f"{citation.place}: not in {citation.reference.label} as quoted: " + "; ".join(
        f'"{quote}"' + (f" (it stands in {', '.join(labels)})" if labels else "")
        for quote, labels in elsewhere.items())


def test_the_citations_are_found_and_quote_every_seed():
    """The reading of the code finds the citations (a broken search would pass every quote test vacuously)."""
    quoted = {citation.reference.label for citation in CITATIONS if citation.note and quotes(citation.note)}
    assert quoted >= {seed.label for seed in SEEDS}
    assert len(CITATIONS) > 100


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
