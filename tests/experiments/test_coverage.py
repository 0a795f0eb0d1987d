"""The inventory of the source documents' tables and figures (`sentsweep.experiments.seed_exhibits`) against the
seed texts, and `sentsweep list --coverage` (`sentsweep.experiments.coverage`).

Every caption a seed prints ("Table 6.10: ...", "**Figure 2.1:** ...") is in the inventory, once, and each entry's
caption words open its place's caption in the seed; every result either has a sweep with targets or says why not;
the sweeps an entry names exist.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.coverage import NO_SWEEP, WITH_TARGETS, WITHOUT_TARGETS, coverage, places_named
from sentsweep.experiments.seed_exhibits import EXHIBITS, RESULT
from sentsweep.references import SOURCE_DOCUMENTS, THESIS_WANG_2022, TSDAE, Reference
from sentsweep.settings import cited
from tests.test_seed_quotes import needs_seeds, normalised, seed_file

CAPTION = re.compile(r"(?P<word>Table|Figure)\s+(?P<number>\d+(?:\.\d+)?)\s*[:.](?!\d)\s*(?P<text>.*)")


def seed_captions(document: Reference) -> dict[str, str]:
    """{place: its caption's normalised text} of every caption line the seed of `document` prints."""
    captions = {}
    for line in seed_file(document).read_text(encoding="utf-8").splitlines():
        text = re.sub(r"\s+", " ", line.replace("*", "").lstrip("#")).strip()
        if match := CAPTION.match(text):
            captions[f"{match['word']} {match['number']}"] = normalised(match["text"])
    return captions


def inventory_problems(exhibits, document: Reference) -> list[str]:
    """What the inventory `exhibits` gets wrong about `document`'s captions: a caption it leaves out, an entry the
    seed has no caption for, a caption whose opening words differ, a place listed twice."""
    captions = seed_captions(document)
    own = [exhibit for exhibit in exhibits if exhibit.document == document]
    places = [exhibit.place for exhibit in own]
    problems = [f"{place}: listed {places.count(place)} times" for place in sorted(set(places))
                if places.count(place) > 1]
    problems += [f"{place}: not in the inventory ({caption[:60]!r})" for place, caption in captions.items()
                 if place not in places]
    for exhibit in own:
        if exhibit.place not in captions:
            problems.append(f"{exhibit.place}: the seed prints no such caption")
        elif not captions[exhibit.place].startswith(normalised(exhibit.caption)):
            problems.append(f"{exhibit.place}: {exhibit.caption!r} does not open {captions[exhibit.place][:80]!r}")
    return problems


@pytest.mark.parametrize("document", SOURCE_DOCUMENTS, ids=lambda document: document.label)
def test_every_caption_of_a_document_is_in_the_inventory(document):
    needs_seeds()
    assert inventory_problems(EXHIBITS, document) == []


def test_a_left_out_or_misquoted_caption_fails_the_inventory_check():
    needs_seeds()
    left_out = [exhibit for exhibit in EXHIBITS if (exhibit.document.label, exhibit.place) != ("TSDAE", "Table 9")]
    assert inventory_problems(left_out, SOURCE_DOCUMENTS[2]) == [
        "Table 9: not in the inventory ('Evaluation of different checkpoints using average precision.')"]
    misquoted = [replace(exhibit, caption="Evaluation of other checkpoints")
                 if (exhibit.document.label, exhibit.place) == ("TSDAE", "Table 9") else exhibit
                 for exhibit in EXHIBITS]
    [problem] = inventory_problems(misquoted, SOURCE_DOCUMENTS[2])
    assert problem.startswith("Table 9: 'Evaluation of other checkpoints' does not open \"Evaluation of different")


def test_every_result_has_targets_or_a_reason_and_names_real_sweeps():
    names = experiment_names()
    items = coverage({name: get_experiment(name) for name in names})
    assert len(items) == sum(exhibit.kind == RESULT for exhibit in EXHIBITS)
    for item in items:
        assert set(item.sweeps) <= set(names), item.exhibit.place
        assert item.status == WITH_TARGETS or item.exhibit.reason, f"{item.exhibit.document.label} {item.exhibit.place}"
    assert all(exhibit.kind == RESULT or not (exhibit.sweeps or exhibit.reason) for exhibit in EXHIBITS)


def test_a_target_citing_a_result_makes_it_targeted_by_its_sweep():
    def status(items, label, place):
        return next(item for item in items if (item.exhibit.document.label, item.exhibit.place) == (label, place))

    alone = coverage({})
    assert status(alone, "TSDAE", "Table 9").status == NO_SWEEP
    assert status(alone, "Reiml 2023", "Figure 6.3").status == WITHOUT_TARGETS  # its entry names augsbert
    target = PublishedValue(params={"method": "tsdae"}, metric="askubuntu_map", value=56.6,
                            source=cited(TSDAE, "App. C, Table 9 (ELECTRA-base)"))
    other = PublishedValue(params={"method": "tsdae"}, metric="askubuntu_map", value=56.6,
                           source=cited(THESIS_WANG_2022, "Table 9"))  # another document's Table 9
    item = status(coverage({"checkpoints": SimpleNamespace(published=(target, other), published_results=(),
                                                                 orderings=())}),
                  "TSDAE", "Table 9")
    assert (item.status, item.sweeps) == (WITH_TARGETS, {"checkpoints": 1})


@pytest.mark.parametrize(("where", "places"), [
    ("§6, Table 2 (unsupervised learning)", {"Table 2"}),
    ("App. A, Tables 6 (ratio 0.6) and 7 (CLS)", {"Table 6", "Table 7"}),
    ("Figures 4.1-4.3", {"Figure 4.1", "Figure 4.2", "Figure 4.3"}),
    ("§7.1, Fig. 3", {"Figure 3"}),
    ("§5.3.3", set()),
])
def test_places_named_by_a_citation(where, places):
    assert places_named(where) == places


def test_list_coverage_prints_every_result_and_the_counts():
    result = subprocess.run([sys.executable, "-m", "sentsweep", "list", "--coverage"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    results = [exhibit for exhibit in EXHIBITS if exhibit.kind == RESULT]
    listed = [line.split()[0] + " " + line.split()[1] for line in lines if line.startswith("  ")]
    assert listed == [exhibit.place for exhibit in results]
    counts = re.fullmatch(r"(\d+) result tables and figures: (\d+) with targets, (\d+) sweep without targets, "
                          r"(\d+) no sweep \(each with its reason\)", lines[-1])
    assert counts, lines[-1]
    total, *parts = map(int, counts.groups())
    assert total == len(results) == sum(parts) == 55
    assert parts == [39, 7, 9]
