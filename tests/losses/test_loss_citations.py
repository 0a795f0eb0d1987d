"""Every loss in sentsweep.losses and every pair model cites its source: a `reference`, a BibTeX `citation`, and a
docstring naming the work with an example (found by inspecting the modules, so a new class without them fails)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
from torch import nn

import sentsweep.losses
from sentsweep import pair_models, references
from sentsweep.references import SIMCSE, TSDAE, Reference

ENTRY = re.compile(r"@(\w+)\{([a-z0-9]+),\n((?:  [a-z]+ = \{.+\},\n)+)\}")
FIELD = re.compile(r"  ([a-z]+) = \{(.+)\},")
REQUIRED = {"inproceedings": {"booktitle"}, "article": {"journal"}, "mastersthesis": {"school"},
            "misc": {"howpublished"}, "unpublished": {"note"}}


def loss_classes() -> list[type]:
    """The classes named *Loss that the modules of sentsweep.losses define."""
    modules = [importlib.import_module(f"sentsweep.losses.{info.name}")
               for info in pkgutil.iter_modules(sentsweep.losses.__path__)]
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__ and issubclass(cls, nn.Module) and cls.__name__.endswith("Loss")]


def pair_model_classes() -> list[type]:
    """The classes of sentsweep.pair_models with the teacher interface (`loss` and `predict`)."""
    return [cls for _, cls in inspect.getmembers(pair_models, inspect.isclass)
            if cls.__module__ == pair_models.__name__ and hasattr(cls, "loss") and hasattr(cls, "predict")]


CITING_CLASSES = loss_classes() + pair_model_classes()


def parse_bibtex(text: str) -> tuple[str, str, dict[str, str]]:
    """(entry type, key, fields) of one entry; an AssertionError where it is not well-formed."""
    match = ENTRY.fullmatch(text)
    assert match, text
    fields = dict(FIELD.fullmatch(line).groups() for line in match.group(3).splitlines())
    for value in fields.values():
        depth = 0
        for character in value:
            depth += {"{": 1, "}": -1}.get(character, 0)
            assert depth >= 0, value
        assert depth == 0, value
    return match.group(1), match.group(2), fields


def test_the_inspection_finds_every_loss_and_pair_model():
    names = {cls.__name__ for cls in CITING_CLASSES}
    assert names >= {"ConsertLoss", "NoiseMatchingLoss", "SimCseLoss", "ClmAutoEncoderLoss", "MlmAutoEncoderLoss",
                     "MaskedLanguageModelingLoss", "TsdaeLoss", "CrossEncoderTeacher", "CrossBiEncoder"}
    assert set(pair_models.TEACHERS.values()) <= set(CITING_CLASSES)


@pytest.mark.parametrize("cls", CITING_CLASSES, ids=lambda cls: cls.__name__)
def test_class_has_a_reference_and_a_bibtex_citation_of_it(cls):
    reference = cls.__dict__.get("reference")
    assert isinstance(reference, Reference), f"{cls.__name__} sets no `reference`"
    citation = inspect.getattr_static(cls, "citation")
    assert isinstance(citation, property)
    text = citation.fget(cls)  # the property reads only the class attribute `reference`
    assert text == reference.bibtex()
    entry, _, fields = parse_bibtex(text)
    assert fields["title"] == "{" + reference.title + "}"
    assert fields["year"] == str(reference.year)
    assert {"author", "title", "year"} | REQUIRED[entry] <= set(fields)


@pytest.mark.parametrize("cls", CITING_CLASSES, ids=lambda cls: cls.__name__)
def test_docstring_names_the_reference_and_shows_an_example(cls):
    doc = " ".join(inspect.getdoc(cls).split())
    assert cls.reference.title in doc
    assert f"({cls.reference.year})" in doc
    assert "References: -" in doc and ("Examples: " in doc or "Example::" in doc)


def test_every_reference_is_well_formed_bibtex_with_its_own_key():
    works = [value for value in vars(references).values() if isinstance(value, Reference)]
    keys = []
    for work in works:
        entry, key, fields = parse_bibtex(work.bibtex())
        assert REQUIRED[entry] <= set(fields) and fields["title"] == "{" + work.title + "}"
        keys.append(key)
    assert len(set(keys)) == len(works)


def test_instances_cite_their_work(tiny_model_dir):
    from sentsweep.losses.contrastive import SimCseLoss
    from sentsweep.losses.tsdae import TsdaeLoss
    from sentsweep.models import load_sentence_model

    model = load_sentence_model(str(tiny_model_dir), "cls", 32)
    assert SimCseLoss(model).citation == SIMCSE.bibtex()
    assert TsdaeLoss(model).citation == TSDAE.bibtex()  # not DenoisingAutoEncoderLoss's own text
    assert "@inproceedings{wang2021tsdae," in TSDAE.bibtex()
