"""SQuAD sentence retrieval (Malmberg (2021) Table 4.1): pre-trained BERT poolings and layers, TF-IDF, SBERT.

Each question's answer sentence is retrieved among the sentences of its paragraph, scored by top-1 accuracy (§3.4.3).

Stages (independent rows of one table):
- "pre-trained BERT": `frozen_encoder`, the model as released, with Table 4.1's two poolings from the second-to-last
  layer (§3.3.1: [CLS], and the mean without [CLS] and [SEP]) and, the project's extension, the same two from the
  last layer.
- "TF-IDF": lemmatised, the full vocabulary and the top 1024 terms (§3.3.3), its IDF from --corpus (Malmberg 2021
  builds the vocabulary "on the train set of the dataset": give SQuAD's train sentences).
- "SBERT on STS-B": `sbert` on the STS benchmark's train pairs (beside --sts-dir) with "SBERT params" (§3.4.1).

What cannot run, and why:
- The fine-tuned BERT rows (BERT with a task head on STS-B, QQP or MRPC, "SBERT params" and "Devlin params",
  rows 2-7 and 11-16): the project has no method that fine-tunes BERT with a regression or classification head on
  [CLS] over a joined sentence pair (§2.7.4) and then embeds single sentences with the encoder.
- The dropout 0.3 rows: 5, 7, 14 and 16 are fine-tuned BERT rows (above); row 9, SBERT at dropout 0.3, is a
  second run of this sweep with --set dropout=0.3 (its SBERT stage; the table's targets are the 0.1 rows, the
  released model's dropout).
- "Log. reg." (row 19) is the SQuAD paper's number, not a model of the thesis.
Malmberg 2021 trains every model once; the sweep runs seeds (the deterministic rows give one score for every seed).

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
from sentsweep.settings import cited, project_choice
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.protocol import Protocol, Sourced, sourced

TASK = "squad"
METRIC = f"{TASK}_top1"  # Table 4.1's "Accuracy": the answer sentence ranked first among its paragraph's
TABLE_POOLINGS = ["cls_second_last", "mean_no_special_second_last"]  # §3.3.1's two, from the second-to-last layer
LAST_LAYER_POOLINGS = ["cls", "mean_no_special"]  # the project's extension: the same two from the last layer
SBERT_PARAMS = cited(THESIS_MALMBERG_2021, "§3.4.1", '"These shared parameters were a batch size of 16, a learning '
                     'rate of 2e-5 ... using 10% of the data as warm-up, and fine-tuning for 4 epochs"')
ST_FIT_DEFAULT = ("Malmberg 2021 §3.4.1 gives the warm-up only; sentence-transformers' fit() default, the library "
                  "Malmberg 2021 trains SBERT with (§3.5)")

PROTOCOL = Protocol(
    settings={
        "max_seq_length": Sourced(128, project_choice("Malmberg 2021 gives no maximum sequence length")),
    },
    seeds=Sourced(3, project_choice('Malmberg 2021 §5.3: "The models used in the experiments in this thesis were '
                                    'trained once" ... "the experiments should be repeated"')),
    grids={
        "pretrained_method": Sourced(["frozen_encoder"], cited(THESIS_MALMBERG_2021, "Table 4.1", "BERT, Pre-trained")),
        "lexical_method": Sourced(["tfidf"], cited(THESIS_MALMBERG_2021, "Table 4.1", "TF-IDF")),
        "fine_tuned_method": Sourced(["sbert"], cited(THESIS_MALMBERG_2021, "Table 4.1", "SBERT, STS-B")),
        "pooling": Sourced(TABLE_POOLINGS + LAST_LAYER_POOLINGS, project_choice(
            'Malmberg 2021 §3.3.1: "[CLS] token as a representation" and "averaging the sentence\'s token embeddings '
            'excluding [CLS] and [SEP] embeddings", "extracted from the second last layer"; the last layer\'s are the '
            "project's")),
        "max_features": Sourced([None, 1024], cited(THESIS_MALMBERG_2021, "§3.3.3", '"The size of this vocabulary was '
                                                    '30277" ... "the top 1024 features ordered by term frequency"')),
    },
    method_settings={
        "tfidf": {"lemmatize": Sourced(True, cited(THESIS_MALMBERG_2021, "§3.3.3, Table 4.1", '"Lemma\'d"'))},
        "sbert": {
            **sourced(SBERT_PARAMS, batch_size=16, lr=2e-5, warmup_ratio=0.1, epochs=4),
            "max_steps": Sourced(None, SBERT_PARAMS),
            "pooling": Sourced("mean_no_special", cited(
                THESIS_MALMBERG_2021, "§2.8", '"Pooling is done by computing the mean of all output embeddings of the '
                'BERT network, excluding [CLS] and [SEP] tokens"')),
            "loss": Sourced("cosine", cited(THESIS_MALMBERG_2021, "§2.8", '"Cosine similarity is then computed '
                                            'between these two networks. The loss is computed using the mean-squared '
                                            'error loss function"')),
            "lr_schedule": Sourced("linear", project_choice(f"{ST_FIT_DEFAULT}: WarmupLinear")),
            "weight_decay": Sourced(0.01, project_choice(ST_FIT_DEFAULT)),
            "select_checkpoint": Sourced("last", project_choice("Malmberg 2021 §3.4.1 fine-tunes for 4 epochs and "
                                                                "names no checkpoint selection")),
            "eval_steps": Sourced(None, project_choice("dev at each epoch's end, to follow the run")),
        },
    },
    quick={"lr": 1e-3, "max_steps": 40, "max_seq_length": 32, "seeds": 2},
    notes=("Table 4.1 is scored on SQuAD (give --eval-task squad=dev-v1.1.json; Malmberg 2021 names no split): each "
           "question against the sentences of its paragraph (sentsweep.tasks.distractors).",
           "Malmberg 2021 §3.3.2 calls SBERT's pooling \"the default mode of 'mean-pooling'\" (sentence-transformers' "
           "mean keeps [CLS] and [SEP]) while §2.8 excludes them; the sweep follows §2.8.",
           "Not run: the fine-tuned BERT rows (no method fine-tunes BERT with a task head on STS-B, QQP or MRPC), the "
           "dropout 0.3 fine-tuned rows and 'Log. reg.' (the SQuAD paper's); SBERT at dropout 0.3 (row 9) is a run "
           "with --set dropout=0.3."),
)


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
