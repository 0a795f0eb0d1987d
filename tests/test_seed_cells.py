"""Every number checked where it stands: each published value in its own cell, each quoted setting in its quote.

A published value (`definition.published` of every experiment, and its `published_results`) is read from the
seed's text at its cell: the table its source names ("Table 6.14"), the row and the column that its cell's params
and metric are in that table (`ADDRESS`, one rule per experiment: the row labels and column names as the seed
prints them), found by `tests.helpers.seed_documents.SeedTable` (the row by its label and block, the column by its
header
name, or by the number of the value in the row where the header groups columns or the extraction garbled it). The
value must equal the number printed there, not only one printed somewhere in the table
(`tests/test_seed_quotes.py` checks the table).

A setting whose citation quotes numbers ('"the initial learning rates are 3e-5"') holds one of them: its value
is one of the quote's numbers, read as the seed writes them ("3e-5", "12.5K", "100k", "10%" as 0.1 or 10,
"65,536"). A setting whose value the note derives from the quote's numbers (5 epochs x 75,000 pairs / 64) is
named in `DERIVED` with its derivation.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import pytest

from sentsweep import experiments
from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.search_spaces.protocol import Sourced
from sentsweep.settings import Source
from tests.helpers.seed_documents import places_in, tables_of
from tests.test_seed_quotes import QUOTE, SEEDS, needs_seeds, seed_document

USEB_COLUMNS = {"askubuntu": 0, "cqadupstack": 1, "twitterpara": 4, "scidocs": 9}  # AskU., CQADup., TwitterP. Avg.,
# SciDocs Avg.: the number of the value in a row of TSDAE Table 2 and Reiml 2023 Table 6.10 (their headers group
# columns)
TABLE_2_BLOCKS = {"unsupervised learning": "Unsupervised learning based on BERT-base",
                  "domain adaptation: NLI+STS to target task": "NLI+STS \\to target task",
                  "domain adaptation: target task to NLI+STS": "target task \\to NLI+STS",
                  "other previous unsupervised approaches": "Other previous unsupervised approaches"}
ROW_OF_METHOD = {"tsdae": "TSDAE", "mlm": "MLM", "ct": "CT", "simcse": "SimCSE", "bm25": "BM25",
                 "frozen_encoder": "BERT-base-uncased"}
TABLE_6_10_ROWS = {"tsdae": "TSDAE (repr.)", "simcse": "SimCSE", "nm": "NM", "mlm+simcse": "MLM + SimCSE",
                   "mlm+nm": "MLM + NM", "tsdae+nm": "TSDAE + NM"}
SENTEVAL_COLUMNS = {"sts12": "STS12", "sts13": "STS13", "sts14": "STS14", "sts15": "STS15", "sts16": "STS16",
                    "stsb": "STS-B", "sickr": "SICK-R"}
AUGSBERT_ROWS = {"upper-bound": ("Roberta (Upper-bound)", "RoBERTA (Upper-bound)"), "none": "AugSBERT-None",
                 "random": "AugSBERT-R.S.", "kde": "AugSBERT-KDE", "bm25": "AugSBERT-BM25", "semantic": "AugSBERT-S.S."}
AUGSBERT_COLUMNS = {"spanish-sts": "Spanish-STS", "bws-cross-topic": "BWS (cross-topic)",
                    "bws-in-topic": "BWS (in-topic)"}
WANG_ROWS = {"simcse": "SimCSE _{NT-Xent}", "simcse_bce": "SimCSE _{BCE}", "frozen_encoder": "Bert-base-uncased",
             "bm25": "BM25"}
MULTITASK_ROWS = {"clm_ae": "$\\mathcal{L}_{CLM_autoencoder}$", "mlm_ae": "$\\mathcal{L}_{MLM_autoencoder}$"}
SQUAD_ROWS = {"mean_no_special_second_last": "BERT Mean Pre-trained 0.1 -",
              "cls_second_last": "BERT CLS Pre-trained 0.1 -", "mean_no_special": "SBERT Mean STS-B 0.1 SBERT params"}


@dataclass(frozen=True)
class Cell:
    """Where a published value stands: table `table`, the row labelled `row` in the block whose title holds
    `block`, column `column` (a header name, or the number of the value in the row)."""

    table: str
    row: str | tuple[str, ...]  # one label, or the labels of the table's printings (6.12 and 6.13 spell it apart)
    column: str | int
    block: str = ""


def _where(target: PublishedValue) -> tuple[str, str]:
    """The table a target's source names ("Table 6.14") and what its brackets say ("FullDomainSBERT Hidden, ...")."""
    where = target.source.where
    table = re.search(r"Tables?\s+(\d+(?:\.\d+)?)", where).group(1)
    inside = re.search(r"Table\s+\d+(?:\.\d+)?\s*\((.*)\)$", where)
    return table, inside.group(1) if inside else ""


def _useb(table: str, row: str, target: PublishedValue, block: str = "") -> Cell:
    return Cell(table, row, USEB_COLUMNS[target.params["target_task"]], block)


def _table_2_or_3(target: PublishedValue) -> list[Cell]:
    table, inside = _where(target)
    method = target.params["method"]
    if method == "sbert":  # target -> NLI+STS: the row of the unsupervised method the chain started from
        method = re.search(r"pretrained=method=([\w+]+)", target.params["pretrained"]).group(1)
    if table == "3":
        return [Cell("3", ROW_OF_METHOD[method], 0)]
    if table == "11":
        return [Cell("11", ROW_OF_METHOD[method], SENTEVAL_COLUMNS[target.metric.split("_")[0]])]
    return [_useb("2", ROW_OF_METHOD[method], target, TABLE_2_BLOCKS[inside])]


def _table_10(target) -> list[Cell]:
    """TSDAE App. D, Table 10: one unlabelled row of intersection points under "AskU. CQADup. TwitterP. SciDocs"."""
    return [Cell("10", "", ("askubuntu", "cqadupstack", "twitterpara", "scidocs").index(target.options["target_task"]))]


def _table_6_10(target: PublishedValue) -> list[Cell]:
    _, inside = _where(target)
    if "pooling block" in inside:  # nm_weight: "cls pooling block", "mean pooling block"
        block = "CLS pool" if inside.startswith("cls") else "mean poo"
        return [_useb("6.10", TABLE_6_10_ROWS[target.params["method"]], target, block)]
    return [_useb("6.10", inside, target, "Augmented SBERT")]


def _tsdae_search(target: PublishedValue) -> list[Cell]:
    """TSDAE App. A, Tables 5-7 (one row "Score" under a header of noise types, ratios or poolings); the tied score
    stands in its text only."""
    params, where = target.params, target.source.where
    if "in no table" in where:
        return []
    columns = {"5": {"delete": "Delete", "swap": "Swap", "mask": "Mask", "replace": "Replace",
                     "insert": "Add"}.get(params["noise_type"]),
               "6": f"{params['noise_ratio']:g}", "7": {"cls": "CLS", "mean": "Mean", "max": "Max"}[params["pooling"]]}
    return [Cell(place.label, "Score", columns[place.label]) for _, _, place in places_in(where)
            if place.kind == "table"]


def _reiml_named_row(target: PublishedValue) -> list[Cell]:
    """Reiml 2023 Tables 6.1-6.8: the row in the source's brackets; the column by the metric."""
    table, inside = _where(target)
    metric = target.metric
    columns = {"6.1": "STS-B", "6.4": "STS-B", "6.5": "BWS Similarity $(\\rho)$", "6.7": "BWS Similarity $(\\rho)$"}
    if table == "6.2":
        column = "STS-B (pearson)" if metric.endswith("pearson") else "STS-B (spearman)"
    elif table == "6.3":
        column = "STS-B (Bi-Encoder)" if metric.startswith("teacher_student") else "STS-B (Original)"
    elif table in ("6.6", "6.8"):
        column = SENTEVAL_COLUMNS[metric.split("_")[0]]
    else:
        column = columns[table]
    return [Cell(table, inside, column)]


def _augsbert(target: PublishedValue) -> list[Cell]:
    table, inside = _where(target)
    sampling, dataset = (part.strip() for part in inside.split(","))
    rows = AUGSBERT_ROWS[sampling]
    return [Cell(table, rows, AUGSBERT_COLUMNS[dataset])]


def _topic_distillation(target: PublishedValue) -> list[Cell]:
    """Reiml 2023 Tables 6.14-6.17: the row in the source's brackets ("FullDomainSBERT Hidden"), the column by its
    header name ("Raw (F1)", "STS-B"; Table 6.17 prints SICK-R before STS-B)."""
    table, inside = _where(target)
    row, column = (part.strip() for part in inside.split(","))
    if table == "6.16":  # its header's first line is garbled by the extraction: UKP (F1) Raw, Prompted are the
        return [Cell(table, row, {"Raw (F1)": 2, "Prompted (F1)": 3}[column])]  # 3rd and 4th values
    return [Cell(table, row, column)]


def _wang(target: PublishedValue) -> list[Cell]:
    table, _ = _where(target)
    params, metric = target.params, target.metric
    if table == "5.9":
        return [Cell(table, WANG_ROWS[params["method"]], "STS-B[%]")]
    if table == "5.10":  # two header lines ("R@100 [%]" over "Quora CQADupStack"): the 1st and 2nd values
        return [Cell(table, WANG_ROWS[params["method"]], 1 if "cqadupstack" in metric else 0)]
    method = params["method"]
    if method == "simcse":
        row = "\\mathcal{L}_{simcse}^1" if params.get("epochs") == 1 else "\\mathcal{L}_{simcse}"
    elif method in MULTITASK_ROWS:
        row = MULTITASK_ROWS[method]
    else:
        second = "CLM" if method.endswith("clm_ae") else "MLM"
        row = f"$\\mathcal{{L}}_{{simcse}} + {params['w']:g} * \\mathcal{{L}}_{{{second}_autoencoder}}$"
    return [Cell(table, row, "$R@10[\\%]$" if metric.endswith("_10") else "$R@100[\\%]$")]


def _squad(target: PublishedValue) -> list[Cell]:
    params = target.params
    if params["method"] == "tfidf":
        row = "TF-IDF - - - Lemma'd, max size vocab" if params["max_features"] is None else \
            f"TF-IDF - - - Lemma'd, vocab size {params['max_features']}"
    else:
        row = SQUAD_ROWS[params["pooling"]]
    return [Cell("4.1", row, "Accuracy")]


def _table_9(target: PublishedValue) -> list[Cell]:
    """TSDAE App. C, Table 9: the method's row in its checkpoint's block, each column printed "mean +/- std" (the
    means are the values 0, 2, 4, 6 of a row)."""
    column = ("askubuntu", "cqadupstack", "twitterpara", "scidocs").index(target.params["target_task"]) * 2
    return [Cell("9", ROW_OF_METHOD[target.params["method"]], column, target.params["checkpoint"])]


def _table_4(target: PublishedValue) -> list[Cell]:
    """TSDAE §8, Table 4: the checkpoint's row, each column printed "test/loss" (the test scores are the values 0, 2,
    4, 6 of a row, the training losses 1, 3, 5, 7)."""
    column = ("askubuntu", "cqadupstack", "twitterpara", "scidocs").index(target.params["target_task"]) * 2
    return [Cell("4", target.params["checkpoint"], column + (target.metric == "train_loss"))]


def _out_of_the_box(target: PublishedValue) -> list[Cell]:
    """TSDAE Tables 2 and 3, block "Out-of-the-box supervised pre-trained models": the row of the model's hub name
    (its part after the organisation), in the column of the task its metric names (Table 3: STSb, its first value)."""
    table, _ = _where(target)
    row = target.params["model"].split("/")[-1]
    if table == "3":
        return [Cell("3", row, 0, "Out-of-the-box")]
    task = next(task for task in USEB_COLUMNS if target.metric.startswith(task))
    return [Cell("2", row, USEB_COLUMNS[task], "Out-of-the-box")]


ADDRESS = {"tsdae_main": _table_2_or_3, "domain_adaptation": _table_2_or_3, "labelled_intersection": _table_2_or_3,
           "tsdae_checkpoints": _table_9, "tsdae_initialisation": _table_4,
           "tsdae_out_of_the_box": _out_of_the_box,
           "nm_weight": _table_6_10, "domain_chain_augsbert": _table_6_10, "tsdae_noise": _tsdae_search,
           "tsdae_deletion": _tsdae_search, "cross_bi_encoder": _reiml_named_row, "distillation": _reiml_named_row,
           "augsbert": _augsbert, "topic_distillation": _topic_distillation, "simcse_loss": _wang,
           "multitask_weight": _wang, "squad_sentence_retrieval": _squad}


def definitions() -> dict:
    found = {}
    for name in experiments.experiment_names():
        definition = experiments.get_experiment(name)
        if definition.published:
            found[name] = definition
    return found


def test_every_published_result_of_a_whole_sweep_is_the_number_printed_in_its_cell():
    """labelled_intersection's Table 10 points (`published_results`), each in its task's column."""
    needs_seeds()
    results = [(name, target) for name, definition in DEFINITIONS.items()
               for target in definition.published_results]
    assert {name for name, _ in results} == {"labelled_intersection"} and len(results) == 4
    document = seed_document(results[0][1].source.reference)
    for _, target in results:
        [cell] = _table_10(target)
        assert [table.cell(cell.row, cell.column) for table in tables_of(document, "10")] == [target.value]


def cell_problems(name: str, targets) -> list[str]:
    """What is wrong with each published value of experiment `name`: its cell's number differs, or its cell
    cannot be found in the seed."""
    wrong = []
    for target in targets:
        document = seed_document(target.source.reference)
        for cell in ADDRESS[name](target):
            rows = cell.row if isinstance(cell.row, tuple) else (cell.row,)
            printed = {value for table in tables_of(document, cell.table) for row in rows
                       if (value := table.cell(row, cell.column, cell.block)) is not None}
            label = f"{name}: {target.value:g} ({target.source.where}) at Table {cell.table} row {cell.row!r} column " \
                    f"{cell.column!r}" + (f" block {cell.block!r}" if cell.block else "")
            if not printed:
                wrong.append(f"{label}: {target.source.reference.label} prints no such cell")
            elif not any(math.isclose(target.value, value, abs_tol=1e-9) for value in printed):
                wrong.append(f"{label}: the seed prints {', '.join(f'{value:g}' for value in sorted(printed))}")
    return wrong


DEFINITIONS = definitions()


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_every_published_value_is_the_number_printed_in_its_own_cell(name):
    needs_seeds()
    targets = [target for target in DEFINITIONS[name].published if target.source.reference in SEEDS]
    assert name in ADDRESS, f"{name}: its published values have no cell address in this test"
    assert targets and not cell_problems(name, targets), "\n".join(cell_problems(name, targets))


def test_every_published_value_but_the_texts_has_a_cell():
    """Each published value is checked in a cell, but App. A's tied score, which TSDAE prints in the text only."""
    uncelled = [(name, target.source.where) for name, definition in DEFINITIONS.items()
                for target in definition.published if not ADDRESS[name](target)]
    assert {where for _, where in uncelled} == {"App. A, text after Table 7 (in no table)"}


def test_a_value_moved_to_another_cell_of_its_table_is_reported(monkeypatch):
    """topic_distillation's FullDomainSBERT Hidden Prompted (F1) 68.3 as 68.65 (Table 6.14's Original row prints
    68.65, so the table holds the number but not this cell)."""
    needs_seeds()
    definition = DEFINITIONS["topic_distillation"]
    hidden = next(target for target in definition.published
                  if target.source.where == "Table 6.14 (FullDomainSBERT Hidden, Prompted (F1))")
    assert hidden.value == 68.3 and not cell_problems("topic_distillation", [hidden])
    moved = tuple(replace(target, value=68.65) if target is hidden else target for target in definition.published)
    monkeypatch.setattr(definition, "published", moved)
    assert cell_problems("topic_distillation", definition.published) == [
        "topic_distillation: 68.65 (Table 6.14 (FullDomainSBERT Hidden, Prompted (F1))) at Table 6.14 row "
        "'FullDomainSBERT Hidden' column 'Prompted (F1)': the seed prints 68.3"]



def test_a_senteval_value_moved_to_another_column_of_its_row_is_reported(monkeypatch):
    """topic_distillation's Table 6.17 DomainSBERT Prompted STS-B 75.38 as 77.03, the row's SICK-R (Table 6.17
    prints SICK-R before STS-B, Table 6.15 after it)."""
    needs_seeds()
    definition = DEFINITIONS["topic_distillation"]
    stsb = next(target for target in definition.published
                if target.source.where == "Table 6.17 (DomainSBERT Prompted, STS-B)")
    assert stsb.value == 75.38 and stsb.metric == "stsb_spearman" and not cell_problems("topic_distillation", [stsb])
    moved = tuple(replace(target, value=77.03) if target is stsb else target for target in definition.published)
    monkeypatch.setattr(definition, "published", moved)
    assert cell_problems("topic_distillation", definition.published) == [
        "topic_distillation: 77.03 (Table 6.17 (DomainSBERT Prompted, STS-B)) at Table 6.17 row "
        "'DomainSBERT Prompted' column 'STS-B': the seed prints 75.38"]

# --- settings against the numbers of their quotes ------------------------------------------------------------------

# A number as a seed writes it: "3e-5", "12.5K", "100k", "65,536", "10%", "0.0".
QUOTED_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:e-?\d+)?)(K|k|%)?(?![\w.])")
# Settings whose value the note derives from its quote's numbers, not one of them: (path, setting) -> derivation.
DERIVED = {("topic_distillation", "augsbert", "domain_mlm_steps"): "ceil(5 epochs x 75,000 pairs / 64)",
           ("sample_size", "", "sample_size"): "the powers of two from 128 to 65,536 (the points between: the "
                                               "project's)"}


def quoted_numbers(note: str) -> set[float]:
    """Every number of the quotes ("...") in `note`, "12.5K" as 12,500 and "10%" as both 10 and 0.1."""
    found = set()
    for quote in QUOTE.findall(note):
        for number, suffix in QUOTED_NUMBER.findall(quote):
            value = float(number.replace(",", ""))
            found |= {value * 1000} if suffix in ("K", "k") else {value, value / 100} if suffix == "%" else {value}
    return found


def _numbers_of(value) -> list[float] | None:
    """The numbers a setting's value is (a list: each), None for one that is not a number."""
    values = value if isinstance(value, list | tuple) else [value]
    if not values or any(isinstance(item, bool) or not isinstance(item, int | float) for item in values):
        return None
    return [float(item) for item in values]


def quoted_settings() -> list[tuple[tuple[str, str, str], Sourced]]:
    """((experiment, method or "", setting), Sourced) of every protocol setting, grid and seed count whose
    citation of a seed quotes a number."""
    found = []
    for name, definition in sorted(all_definitions().items()):
        protocol = definition.protocol
        items = [(("", key), item) for key, item in {**protocol.settings, **protocol.grids}.items()]
        items += [((method, key), item) for method, settings in protocol.method_settings.items()
                  for key, item in settings.items()]
        items.append((("", "seeds"), protocol.seeds))
        for (method, key), item in items:
            source = item.source
            if isinstance(source, Source) and source.reference in SEEDS and quoted_numbers(source.note or "") \
                    and _numbers_of(item.value) is not None:
                found.append(((name, method, key), item))
    return found


def all_definitions() -> dict:
    return {name: experiments.get_experiment(name) for name in experiments.experiment_names()}


def _absent(values: list[float], numbers: set[float]) -> list[float]:
    return [value for value in values if not any(math.isclose(value, number, rel_tol=1e-9) for number in numbers)]


def setting_problems(settings) -> list[str]:
    """Each setting whose value is not among the numbers its quote prints."""
    wrong = []
    for key, item in settings:
        if key in DERIVED:
            continue
        numbers = quoted_numbers(item.source.note)
        values = _numbers_of(item.value)
        # a list of seeds: the seeds the quote names, or as many as it says
        if _absent(values, numbers) and not (key[-1] == "seeds" and not _absent([float(len(values))], numbers)):
            wrong.append(f"{'/'.join(part for part in key if part)} = {item.value!r}: its quote ({item.source}) "
                         f"prints {', '.join(f'{number:g}' for number in sorted(numbers))}")
    return wrong


QUOTED_SETTINGS = quoted_settings()


def test_every_setting_is_a_number_its_quote_prints():
    assert len(QUOTED_SETTINGS) > 50
    assert not setting_problems(QUOTED_SETTINGS), "\n".join(setting_problems(QUOTED_SETTINGS))


def test_a_setting_changed_under_its_quote_is_reported(monkeypatch):
    """TSDAE's lr 5e-5 under TSDAE App. B's "the initial learning rates are 3e-5"."""
    from sentsweep.search_spaces import tsdae

    lr = tsdae.PAPER_METHOD_SETTINGS["tsdae"]["lr"]
    assert lr.value == 3e-5 and "3e-5" in lr.source.note
    monkeypatch.setitem(tsdae.PAPER_METHOD_SETTINGS["tsdae"], "lr", replace(lr, value=5e-5))
    problems = setting_problems(quoted_settings())
    assert problems and all(problem.endswith("tsdae/lr = 5e-05: its quote (TSDAE App. B (\"the batch size is 8; the "
                                             "optimizers are AdamW ...; the initial learning rates are 3e-5\")) "
                                             "prints 3e-05, 8") for problem in problems)
