"""SQuAD sentence retrieval (Malmberg (2021) Table 4.1): pre-trained BERT poolings and layers, TF-IDF, SBERT.

Each question's answer sentence is retrieved among the sentences of its paragraph, scored by top-1 accuracy
(§3.4.3); stages "pre-trained BERT", "TF-IDF" and "SBERT on STS-B" are independent rows of one table. Each stage,
and the rows that do not run: docs/sweeps.md, "squad_sentence_retrieval".

    python sweeps/squad_sentence_retrieval.py --dry-run                   # the protocol card
    python sweeps/squad_sentence_retrieval.py --quick                     # a generated SQuAD-like file
    python sweeps/squad_sentence_retrieval.py --model bert-large-uncased --corpus squad_train_sentences.txt \\
        --sts-dir data/stsbenchmark --eval-task squad=data/squad/dev-v1.1.json --gpus-per-trial 0.5
"""

from __future__ import annotations

import json
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
from sentsweep.errors import InputError
from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.search_spaces.malmberg_2021 import METRIC, SQUAD_SENTENCE_RETRIEVAL_PROTOCOL as PROTOCOL, TASK
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition


def pretrained_axes(options):
    return {"method": PROTOCOL.grid("pretrained_method"), "pooling": PROTOCOL.grid("pooling")}


def tfidf_axes(options):
    return {"method": PROTOCOL.grid("lexical_method"), "max_features": PROTOCOL.grid("max_features")}


def sbert_axes(options):
    return {"method": PROTOCOL.grid("fine_tuned_method")}


def check_squad_task(options, constants: dict) -> None:
    """Table 4.1's metric needs the SQuAD task (--quick generates one)."""
    # lazy: torch
    from sentsweep.tasks import parse_task_specs

    if options.quick or options.dry_run:
        return
    if TASK not in (constants.get("eval_tasks") or {}):
        given = ", ".join(parse_task_specs(options.eval_task)) if options.eval_task else "none"
        raise InputError(f"Table 4.1 is scored on SQuAD: give --eval-task {TASK}=PATH/dev-v1.1.json (tasks given: "
                         f"{given})")


def demo_squad_file(corpus: list[str], path: Path, per_paragraph: int = 4) -> Path:
    """A SQuAD v1.1 file from the demo sentences: paragraphs of `per_paragraph` sentences, one question per
    sentence ("Who" and the sentence without its first two words), answered by that sentence."""
    paragraphs = []
    for first in range(0, len(corpus) - per_paragraph + 1, per_paragraph):
        sentences = corpus[first:first + per_paragraph]
        context = " ".join(sentences)
        starts = [sum(len(s) + 1 for s in sentences[:i]) for i in range(len(sentences))]
        qas = [{"id": f"q{first + i}", "question": "Who " + " ".join(sentence.rstrip(".").split()[2:]) + "?",
                "answers": [{"text": sentence, "answer_start": start}]}
               for i, (sentence, start) in enumerate(zip(sentences, starts))]
        paragraphs.append({"context": context, "qas": qas})
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "demo", "paragraphs": paragraphs}]}))
    return path


def quick_squad(constants: dict, output_dir: Path) -> dict:
    """--quick: a SQuAD-like file from the demo corpus, unless --eval-task gave SQuAD."""
    tasks = dict(constants.get("eval_tasks") or {})
    if TASK not in tasks:
        output_dir.mkdir(parents=True, exist_ok=True)
        sentences = read_corpus(constants.get("corpus") or CORPUS_FILE)
        tasks[TASK] = str(demo_squad_file(sentences, output_dir / "demo-squad.json").resolve())
    return {"eval_tasks": tasks}


# Table 4.1 ("SQuAD experiments"), the rows the sweep runs, as printed ("Model Pooling Fine-tuned Dropout Comment
# Accuracy"): "BERT Mean Pre-trained 0.1 - 70.1%", "BERT CLS Pre-trained 0.1 - 37.0%", "SBERT Mean STS-B 0.1 SBERT
# params 72.9%", "TF-IDF - - - Lemma'd, max size vocab 77.2%", "TF-IDF - - - Lemma'd, vocab size 1024 70.5%".
TABLE_4_1 = [
    ({"method": "frozen_encoder", "pooling": "mean_no_special_second_last"}, 70.1),
    ({"method": "frozen_encoder", "pooling": "cls_second_last"}, 37.0),
    ({"method": "sbert", "pooling": "mean_no_special"}, 72.9),
    ({"method": "tfidf", "lemmatize": True, "max_features": None}, 77.2),
    ({"method": "tfidf", "lemmatize": True, "max_features": 1024}, 70.5),
]


def table_4_1_targets() -> list[PublishedValue]:
    """Table 4.1's cells the sweep produces: one run each (§5.3), top-1 accuracy x 100 on SQuAD."""
    source = cited(THESIS_MALMBERG_2021, "Table 4.1")
    note = ("Malmberg 2021 names neither the BERT-large checkpoint (§3.3: 1024 dimensions) nor the SQuAD split; its "
            "sentence splitter is NLTK's, the project's its own")
    return [PublishedValue(params=cell, metric=METRIC, value=value, source=source, runs=1, note=note)
            for cell, value in TABLE_4_1]


DEFINITION = SweepDefinition(
    name="squad_sentence_retrieval",
    description=__doc__.splitlines()[0],
    reference=THESIS_MALMBERG_2021,
    protocol=PROTOCOL,
    stages=[Stage("pre-trained BERT", pretrained_axes, grids={"method": "pretrained_method"}),
            Stage("TF-IDF", tfidf_axes, grids={"method": "lexical_method"}),
            Stage("SBERT on STS-B", sbert_axes, grids={"method": "fine_tuned_method"})],
    trains_on_gold_pairs=True,
    check=check_squad_task,
    quick_setup=quick_squad,
    table_metrics=[METRIC, "best_sts_dev"],
    published=tuple(table_4_1_targets()),
)
