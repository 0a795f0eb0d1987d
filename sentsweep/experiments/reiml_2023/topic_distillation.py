"""Topic-sensitive embeddings: Classifier, pretrained RoBERTa and Augmented SBERT with shown / hidden topic prompts
(Reiml 2023 Tables 6.14-6.17).

Reiml (2023), §4.4, §5.6. Every trial is scored by frozen-encoder topic classification on the raw sentences
(`topics`) and on the sentences with their topic prompts (`topics_prompted`); stages "pretrained", "classifier",
"prompted" and "original" are the tables' independent rows, and `--dataset` (20newsgroups: Tables 6.14-6.15, ukp:
Tables 6.16-6.17) names the tables whose F1 and SentEval columns are the targets (the SentEval tasks with
--eval-task sts12=... sts16=... stsb=... sickr=...). Each stage, and what does not run:
docs/sweeps.md, "topic_distillation".

    python sweeps/topic_distillation.py --dry-run                   # the protocol card
    python sweeps/topic_distillation.py --quick
    python sweeps/topic_distillation.py --model roberta-base --sts-dir data/stsbenchmark --dataset ukp \\
        --topic-corpus data/ukp/train.tsv --corpus data/ukp/sentences.txt \\
        --eval-task topics=data/ukp topics_prompted=data/ukp
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
from sentsweep.errors import InputError
from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.reiml_2023 import (
    PAIRS_PER_SENTENCE,
    TOPIC_DATASETS as DATASETS,
    TOPIC_DISTILLATION_PROTOCOL as PROTOCOL,
)
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option
from sentsweep.topics import read_topic_table


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
# Table 6.15 (20 Newsgroups, 2 seeds) and Table 6.17 (UKP, 3 seeds), "SentEval results": the rows as printed
# ("Model Prompted STS12 STS13 STS14 STS15 STS16 STS-B SICK-R Avg."; Table 6.17 prints SICK-R before STS-B), the Avg.
# column (the mean of the seven) left out. The Pretrained SBERT rows are not targets (no model named).
SENTEVAL_METRICS = {"STS12": "sts12_wmean_spearman", "STS13": "sts13_wmean_spearman", "STS14": "sts14_wmean_spearman",
                    "STS15": "sts15_wmean_spearman", "STS16": "sts16_wmean_spearman", "STS-B": "stsb_spearman",
                    "SICK-R": "sickr_spearman"}
YEARS_NOTE = ("Reiml 2023 scores STS12-16 with SentEval (§5.2.2: \"we use SentEval for those\") and does not say how "
              "a year's subsets are combined: SentEval's weighted mean, the project's main metric of STS12-16")
SENTEVAL_TABLES = {
    "20newsgroups": ("Table 6.15", 2, ("STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R"), {
        ("FullDomainSBERT", "Original"): (63.66, 69.05, 69.92, 76.43, 78.32, 70.41, 72.57),
        ("FullDomainSBERT", "Prompted"): (63.72, 69.1, 69.18, 75.83, 76.26, 69.48, 72.19),
        ("DomainSBERT", "Hidden"): (63.33, 68.07, 69.2, 75.37, 76.24, 70.71, 71.58),
        ("DomainSBERT", "Prompted"): (62.77, 68.07, 68.97, 75.03, 76.33, 69.84, 71.98),
        ("DomainSBERT", "Original"): (62.12, 68.62, 68.75, 75.49, 76.11, 69.3, 71.99),
        ("FullDomainSBERT", "Hidden"): (63.21, 67.77, 68.46, 74.98, 76.13, 68.45, 71.09),
        ("Pretrained RoBERTa", "Original"): (53.82, 46.58, 56.64, 64.96, 63.62, 69.83, 76.84),
        ("Classifier", "Original"): (46.05, 36.77, 39.89, 43.3, 50.44, 53.71, 61.69),
        ("Classifier", "Prompted"): (38.18, 33.51, 32.96, 39.48, 45.62, 47.61, 61.99)}),
    "ukp": ("Table 6.17", 3, ("STS12", "STS13", "STS14", "STS15", "STS16", "SICK-R", "STS-B"), {
        ("DomainSBERT", "Prompted"): (67.46, 74.08, 74.29, 79.75, 80.3, 77.03, 75.38),
        ("FullDomainSBERT", "Prompted"): (67.94, 73.4, 74.71, 79.25, 80.03, 76.22, 75.89),
        ("DomainSBERT", "Original"): (67.29, 74.41, 74.16, 79.21, 79.61, 76.63, 74.54),
        ("FullDomainSBERT", "Original"): (67.94, 73.92, 74.27, 78.67, 79.38, 75.9, 75.46),
        ("DomainSBERT", "Hidden"): (66.43, 71.04, 72.4, 77.25, 79.18, 77.12, 74.72),
        ("FullDomainSBERT", "Hidden"): (66.29, 70.86, 71.79, 76.62, 78.34, 75.55, 73.23),
        ("Pretrained RoBERTa", "Original"): (53.82, 46.58, 56.64, 64.96, 63.62, 76.84, 69.83),
        ("Classifier", "Prompted"): (52.26, 54.05, 47, 54.79, 61.05, 67.01, 58.84),
        ("Classifier", "Original"): (45.38, 45.93, 47.62, 52.98, 57.84, 62.38, 51.28)}),
}
ROBERTA = {"model": "roberta-base"}  # Reiml 2023 §5.6.1: "we use the RoBERTa model"


def table_targets(dataset: str, table: str, runs: int, columns, rows: dict) -> list[PublishedValue]:
    """A table's cells, each keyed on its data set, its row's stage and axes, in its column's metric (`columns`:
    (metric, column name) in the table's order)."""
    targets = []
    for (model, prompted), values in rows.items():
        stage, axes = ROWS[model, prompted]
        for (metric, column), value in zip(columns, values, strict=True):
            targets.append(PublishedValue(
                params={"dataset": dataset, "stage": stage} | axes, metric=metric, value=value,
                source=cited(THESIS_REIML_2023, f"{table} ({model} {prompted}, {column})"), runs=runs,
                setting=ROBERTA, note=YEARS_NOTE if metric.endswith("_wmean_spearman") else ""))
    return targets


def published() -> tuple[PublishedValue, ...]:
    """The F1 cells of Tables 6.14 and 6.16 and the SentEval cells of Tables 6.15 and 6.17."""
    targets = []
    for dataset, (table, runs, rows) in TABLES.items():
        targets += table_targets(dataset, table, runs, F1_COLUMNS, rows)
    for dataset, (table, runs, names, rows) in SENTEVAL_TABLES.items():
        targets += table_targets(dataset, table, runs, [(SENTEVAL_METRICS[name], name) for name in names], rows)
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
    # Reiml 2023 Tables 6.14 and 6.16 (F1) and 6.15 and 6.17 (SentEval) of the run's --dataset
    published=published(),
)
