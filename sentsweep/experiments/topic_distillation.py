"""Topic-sensitive embeddings: Classifier, pretrained RoBERTa and Augmented SBERT with shown / hidden topic prompts
(Reiml 2023 Tables 6.14-6.17).

Reiml (2023), §4.4, §5.6. Every trial is scored by the frozen-encoder topic classification on the raw sentences
(eval task `topics`, "Raw (F1)") and on the sentences with their topic prompts (`topics_prompted`, "Prompted (F1)");
give both with --eval-task, and --topic-corpus the topic-labelled training sentences ("topic<TAB>sentence", UKP; or
"label<TAB>prompt<TAB>sentence", 20 Newsgroups with its parent groups as prompts). Stages (independent rows):
- "pretrained": `frozen_encoder`, --model as released ("Pretrained RoBERTa").
- "classifier": `topic_classifier` on the raw or the prompted sentences ("Classifier Original / Prompted").
- "prompted": augsbert, setting domain, on the topic corpus's sentences with their prompts (MLM that never masks
  the prompt, then a Cross-Bi-Encoder fine-tuned on STS-B annotates semantic + random pairs); the bi-encoder sees
  the prompt ("Prompted", topic_prompt shown) or not ("Hidden"); it starts from RoBERTa ("DomainSBERT",
  student_init model) or from the MLM checkpoint ("FullDomainSBERT", student_init domain).
- "original": the same without topic information: the pairs are drawn from --corpus, which must hold the topic
  corpus's sentences ("Original").
--dataset names the data set (20newsgroups: Table 6.14, ukp: Table 6.16); the F1 columns of its table are the
run's reproduction targets, scored by a logistic-regression probe on the frozen encoder where Reiml 2023 trains a
classification head (§5.2.2: ten epochs at 1e-3), which the project does not implement. What does not run: the
"Pretrained SBERT" rows (Reiml 2023 does not name the model; stage "pretrained" of a run with --model set to one scores
it), the SentEval columns of Tables 6.15 and 6.17 are logged (give --eval-task stsb=... sickr=... sts12=...) but
not targeted, and Table 6.16's BWS columns (no prompted BWS task).

    python sweeps/topic_distillation.py --dry-run                   # the protocol card
    python sweeps/topic_distillation.py --quick
    python sweeps/topic_distillation.py --model roberta-base --sts-dir data/stsbenchmark --dataset ukp \\
        --topic-corpus data/ukp/train.tsv --corpus data/ukp/sentences.txt \\
        --eval-task topics=data/ukp topics_prompted=data/ukp
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
from sentsweep.errors import InputError
from sentsweep.experiments.protocols.supervised import FINE_TUNING, QUICK, REIML_5_1, REIML_SELECTION, STUDENT_LOSS
from sentsweep.references import THESIS_REIML_2023
from sentsweep.settings import cited, project_choice
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option
from sentsweep.sweep.config.protocol import Protocol, Sourced, sourced
from sentsweep.topics import read_topic_table

SETUP = "§5.6.1"
MLM_QUOTE = ('"MLM training on RoBERTa using all the approximately 75K sentence pairs for 5 epochs with a batch size '
             'of 64 and a learning rate of 3e-5"')
STUDENT_QUOTE = '"Both Bi-Encoders are trained for 5 epochs with a batch size of 64"'
UKP_PAIRS = ('"a pair dataset containing 73364 sentence pairs, each with 2 positive and 2 negative sentence pairs. '
             'The sentence pairs were obtained from semantic search and random search"')
NEWSGROUPS_PAIRS = ('"a pair dataset containing 75424 sentence pairs, each with 4 positive and 4 negative sentence '
                    'pairs"')
DATASETS = ("20newsgroups", "ukp")
PAIRS_PER_SENTENCE = {"20newsgroups": 4, "ukp": 2}  # positives (top_k) and negatives (random) each
PAIRS_SOURCE = cited(THESIS_REIML_2023, SETUP, f"UKP: {UKP_PAIRS}; --dataset 20newsgroups sets 4: {NEWSGROUPS_PAIRS}")
MLM_PAIRS, MLM_EPOCHS, MLM_BATCH = 75_000, 5, 64

PROTOCOL = Protocol(
    settings={
        **FINE_TUNING,
        "select_checkpoint": Sourced("best_sts_dev", REIML_SELECTION),
        "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
        **sourced(PAIRS_SOURCE, top_k=2, random_pairs_per_sentence=2),
    },
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Tables 6.16-6.17", '"Results are averaged over 3 random seeds"; '
                           "Tables 6.14-6.15 average 2")),
    grids={
        "pretrained_method": Sourced(["frozen_encoder"], cited(THESIS_REIML_2023, "Table 6.14", "Pretrained RoBERTa")),
        "classifier_method": Sourced(["topic_classifier"], cited(THESIS_REIML_2023, SETUP, '"we establish a baseline '
                                                                 'method using a simple classification objective"')),
        "distilled_method": Sourced(["augsbert"], cited(THESIS_REIML_2023, SETUP, '"we use the Augmented SBERT '
                                                        'pipeline to distill multiple versions of Bi-Encoders"')),
        "no_topic_corpus": Sourced([None], cited(THESIS_REIML_2023, SETUP, '"one where each sentence pair is trained '
                                                 'without any topic information"')),
        "classifier_inputs": Sourced(["raw", "prompted"], cited(THESIS_REIML_2023, "Table 6.14", 'rows "Classifier" '
                                                                "Original and Prompted")),
        "topic_prompt": Sourced(["shown", "hidden"], cited(THESIS_REIML_2023, SETUP, '"The second Bi-Encoder is '
                                                           'trained on  $(x_1, x_2, s)$ , which represents the hidden '
                                                           'prompt setting"')),
        "student_init": Sourced(["domain", "model"], cited(THESIS_REIML_2023, SETUP, '"we then use either the MLM '
                                                           'pre-training (FullDomainSBERT) or the RoBERTa model '
                                                           '(DomainSBERT) as a starting point"')),
    },
    method_settings={
        "topic_classifier": {
            "select_checkpoint": Sourced("last", project_choice("Reiml 2023 §5.1 keeps the epoch of best F1; the "
                                                                "classifier has no topic dev split here")),
            "epochs": Sourced(5, project_choice("Reiml 2023 §5.6.1 gives the classifier no number of epochs; the "
                                                "bi-encoders' 5")),
            "max_steps": Sourced(None, project_choice("by epochs")),
        },
        "augsbert": {
            "setting": Sourced("domain", cited(THESIS_REIML_2023, SETUP, '"The distillation process starts with '
                                                                        'MLM training on RoBERTa"')),
            "teacher": Sourced("cbe", cited(THESIS_REIML_2023, SETUP, '"to obtain our Cross-Bi-Encoders"')),
            "teacher_epochs": Sourced(5, cited(THESIS_REIML_2023, SETUP, '"Then, we train on the STS-B dataset for '
                                                                         '5 epochs"')),
            "teacher_lr": Sourced(2e-5, REIML_5_1),
            "sampling": Sourced("semantic_random", cited(THESIS_REIML_2023, SETUP, UKP_PAIRS)),
            "domain_mlm_steps": Sourced(math.ceil(MLM_EPOCHS * MLM_PAIRS / MLM_BATCH), cited(
                THESIS_REIML_2023, SETUP, MLM_QUOTE + ": 5 x 75,000 / 64 steps")),
            **sourced(cited(THESIS_REIML_2023, SETUP, MLM_QUOTE), domain_mlm_batch_size=64, domain_mlm_lr=3e-5),
            **sourced(cited(THESIS_REIML_2023, SETUP, STUDENT_QUOTE), epochs=5, batch_size=64),
            "max_steps": Sourced(None, cited(THESIS_REIML_2023, SETUP, STUDENT_QUOTE)),
            "eval_steps": Sourced(None, REIML_SELECTION),
            "loss": STUDENT_LOSS,
            "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' "
                                                      "default")),
        },
    },
    quick=QUICK | dict(epochs=None, teacher_epochs=1, teacher_lr=3e-3, domain_mlm_steps=4, domain_mlm_batch_size=8,
                       top_k=1, random_pairs_per_sentence=1),
    notes=("Not run: the Pretrained SBERT rows (Reiml 2023 does not name the model; stage 'pretrained' of a run with "
           "--model set to one scores it), Table 6.16's BWS columns (no prompted BWS task).",
           "Tables 6.15 and 6.17 (SentEval STS) are logged with --eval-task sts12..sts16, stsb, sickr; not targeted.",
           "The classifier keeps its last epoch (no topic dev split); Reiml 2023 keeps the epoch of best F1.",
           "The Raw (F1) and Prompted (F1) columns are scored by a logistic-regression probe on the frozen encoder's "
           "embeddings (eval tasks `topics` and `topics_prompted`: `LogisticRegressionCV`, its C chosen by an inner "
           "5-fold cross-validation), a project choice: Reiml 2023 writes \"we train a classifier on the original 20 "
           "topics\" (§5.6.2), in §5.2.2 \"a classification head is added to the sentence embedding\" and trained "
           "\"for ten epochs with an increased learning rate of 1e-3\", which the project does not implement. The 36 "
           "F1 targets of Tables 6.14 and 6.16 (every target of this sweep) stand, each compared with the probe's F1: "
           "a difference may be the classifier's."),
)


@dataclass(frozen=True, kw_only=True)
class TopicDistillationOptions(SweepOptions):
    topic_corpus: str | None = option('topic-labelled training sentences ("topic<TAB>sentence" or '
                                      '"label<TAB>prompt<TAB>sentence"); required, but with --quick (default there: '
                                      'the shipped demo topics)')
    dataset: str | None = option("which data set the files are (20newsgroups: Tables 6.14-6.15, ukp: 6.16-6.17); "
                                 "logged as the param `dataset`, its table's targets are checked; default: none, "
                                 "no targets)", choices=DATASETS)


def options_settings(options: TopicDistillationOptions) -> dict:
    """The topic corpus (read now, so a bad file fails first), the data set label and its pairs per sentence."""
    settings = {}
    if options.topic_corpus:
        read_topic_table(options.topic_corpus)
        settings["topic_corpus"] = str(Path(options.topic_corpus).resolve())
    if options.dataset:
        pairs = PAIRS_PER_SENTENCE[options.dataset]
        settings |= {"dataset": options.dataset, "top_k": pairs, "random_pairs_per_sentence": pairs}
    return settings


def check_topic_data(options: TopicDistillationOptions, constants: dict) -> None:
    """The topic corpus is given, and the "original" stage's --corpus holds its sentences (--quick makes both)."""
    if options.quick or options.dry_run:
        return
    if "topic_corpus" not in constants:
        raise InputError("--topic-corpus is required: the topic-labelled sentences every stage trains on")
    if "corpus" not in constants:
        raise InputError("--corpus is required: stage 'original' trains on the sentences of --topic-corpus in it")
    topic_sentences = set(read_topic_table(constants["topic_corpus"]).sentences)
    missing = topic_sentences - set(read_corpus(constants["corpus"]))
    if missing:
        raise InputError(f"--corpus {constants['corpus']} lacks {len(missing)} sentences of --topic-corpus "
                         f"(e.g. {sorted(missing)[0]!r}); stage 'original' must train on the same sentences")


def quick_topics(constants: dict, output_dir: Path) -> dict:
    """--quick: a two-topic file from the demo corpus (even / odd lines) and its `topics` task folders."""
    sentences = read_corpus(constants.get("corpus") or CORPUS_FILE)
    lines = "".join(f"topic{index % 2}\t{sentence}\n" for index, sentence in enumerate(sentences))
    folder = output_dir / "demo-topics"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("train.tsv", "test.tsv"):
        (folder / name).write_text(lines, encoding="utf-8")
    tasks = dict(constants.get("eval_tasks") or {})
    tasks.setdefault("topics", str(folder.resolve()))
    tasks.setdefault("topics_prompted", str(folder.resolve()))
    return {"topic_corpus": constants.get("topic_corpus") or str((folder / "train.tsv").resolve()),
            "eval_tasks": tasks}


def pretrained_axes(options):
    return {"method": PROTOCOL.grid("pretrained_method")}


def classifier_axes(options):
    return {"method": PROTOCOL.grid("classifier_method"), "classifier_inputs": PROTOCOL.grid("classifier_inputs")}


def prompted_axes(options):
    return {"method": PROTOCOL.grid("distilled_method"), "student_init": PROTOCOL.grid("student_init"),
            "topic_prompt": PROTOCOL.grid("topic_prompt")}


def original_axes(options):
    return {"method": PROTOCOL.grid("distilled_method"), "student_init": PROTOCOL.grid("student_init"),
            "topic_corpus": PROTOCOL.grid("no_topic_corpus")}


# Table 6.14 (20 Newsgroups, "Results are averaged over 2 random seeds") and Table 6.16 (UKP, "Results are averaged
# over 3 random seeds"), the F1 columns as printed: "Model Prompted Raw (F1) Prompted (F1)", e.g.
# "FullDomainSBERT	Hidden	63.12	68.3" and "FullDomainSBERT	Prompted	62.74	56.88	74.45	99.78	73.46"
# (UKP's "Raw UKP (F1)" and "Prompted UKP (F1)" are its 3rd and 4th numbers). Row -> the cell's stage and axes.
ROWS = {
    ("Pretrained RoBERTa", "Original"): ("pretrained", {}),
    ("Classifier", "Original"): ("classifier", {"classifier_inputs": "raw"}),
    ("Classifier", "Prompted"): ("classifier", {"classifier_inputs": "prompted"}),
    ("FullDomainSBERT", "Original"): ("original", {"student_init": "domain"}),
    ("FullDomainSBERT", "Prompted"): ("prompted", {"student_init": "domain", "topic_prompt": "shown"}),
    ("FullDomainSBERT", "Hidden"): ("prompted", {"student_init": "domain", "topic_prompt": "hidden"}),
    ("DomainSBERT", "Original"): ("original", {"student_init": "model"}),
    ("DomainSBERT", "Prompted"): ("prompted", {"student_init": "model", "topic_prompt": "shown"}),
    ("DomainSBERT", "Hidden"): ("prompted", {"student_init": "model", "topic_prompt": "hidden"}),
}
TABLES = {
    "20newsgroups": ("Table 6.14", 2, {
        ("Pretrained RoBERTa", "Original"): (63.06, 69.17), ("Classifier", "Original"): (64.48, 68.35),
        ("Classifier", "Prompted"): (50.67, 29.31), ("FullDomainSBERT", "Original"): (62.86, 68.65),
        ("FullDomainSBERT", "Hidden"): (63.12, 68.3), ("FullDomainSBERT", "Prompted"): (63.3, 66.76),
        ("DomainSBERT", "Hidden"): (60.9, 67.41), ("DomainSBERT", "Original"): (60.82, 67.47),
        ("DomainSBERT", "Prompted"): (61.23, 65.02)}),
    "ukp": ("Table 6.16", 3, {
        ("FullDomainSBERT", "Prompted"): (74.45, 99.78), ("DomainSBERT", "Original"): (74.04, 99.36),
        ("FullDomainSBERT", "Original"): (74.04, 99.14), ("DomainSBERT", "Prompted"): (73.53, 99.68),
        ("FullDomainSBERT", "Hidden"): (75.39, 98.99), ("DomainSBERT", "Hidden"): (75.06, 98.81),
        ("Pretrained RoBERTa", "Original"): (74.1, 99.27), ("Classifier", "Original"): (76.32, 98.78),
        ("Classifier", "Prompted"): (76.48, 100.0)}),
}
F1_COLUMNS = (("topics_f1_macro", "Raw (F1)"), ("topics_prompted_f1_macro", "Prompted (F1)"))
ROBERTA = {"model": "roberta-base"}  # Reiml 2023 §5.6.1: "we use the RoBERTa model"


def published() -> tuple[PublishedValue, ...]:
    """The F1 cells of Tables 6.14 and 6.16, each keyed on its data set, stage and axes."""
    targets = []
    for dataset, (table, runs, rows) in TABLES.items():
        for (model, prompted), values in rows.items():
            stage, axes = ROWS[model, prompted]
            for (metric, column), value in zip(F1_COLUMNS, values, strict=True):
                targets.append(PublishedValue(
                    params={"dataset": dataset, "stage": stage} | axes, metric=metric, value=value,
                    source=cited(THESIS_REIML_2023, f"{table} ({model} {prompted}, {column})"), runs=runs,
                    setting=ROBERTA))
    return tuple(targets)


DEFINITION = SweepDefinition(
    name="topic_distillation",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=PROTOCOL,
    stages=[Stage("pretrained", pretrained_axes, grids={"method": "pretrained_method"}),
            Stage("classifier", classifier_axes, grids={"method": "classifier_method"}),
            Stage("prompted", prompted_axes, grids={"method": "distilled_method"}),
            Stage("original", original_axes, grids={"method": "distilled_method", "topic_corpus": "no_topic_corpus"})],
    options=TopicDistillationOptions,
    trains_on_gold_pairs=True,
    settings_from_options=options_settings,
    check=check_topic_data,
    quick_setup=quick_topics,
    data_labels={"dataset": DATASETS},
    table_metrics=["topics_f1_macro", "topics_prompted_f1_macro", "sts_test_at_best_dev", "best_sts_dev"],
    # Reiml 2023 Tables 6.14 and 6.16, the F1 columns of the run's --dataset
    published=published(),
)
