"""Transfer classification as SentEval runs it (Conneau and Kiela (2018), "SentEval: An Evaluation Toolkit for
Universal Sentence Representations"): logistic regression on frozen sentence features (scikit-learn).

Files as SentEval's data/downstream folders hold them (read as Latin-1, as SentEval does):
- `mr` (rt-polarity.pos / .neg), `cr` (custrev.pos / .neg), `subj` (subj.objective / .subjective), `mpqa`
  (mpqa.pos / .neg): one sentence per line, two classes; accuracy of 10-fold stratified cross-validation;
- `trec` (train_5500.label, TREC_10.label: "COARSE:fine question"): the 6 coarse classes; train, then test;
- `sst2` (sentiment-train / -dev / -test: "sentence<TAB>label"): train, test;
- `topics` (train.tsv, test.tsv: "topic<TAB>sentence"): the frozen-encoder topic classification of Reiml (2023),
  "Sentence Embeddings in Various Supervision Settings", section 5.6.2, scored by F1 macro (main: the mean over
  topics of 2 P R / (P + R), P and R the precision and recall of predicting that topic) and accuracy.
In every fold and on every training set the L2 strength C is chosen by an inner 5-fold cross-validation over
SentEval's grid 2^-2 .. 2^3 (`LogisticRegressionCV`). Accuracy (correct predictions / items) x 100; each item's
outcome (1 correct, 0 not) is kept for paired tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sentsweep.errors import InputError
from sentsweep.references import SENTEVAL, THESIS_REIML_2023
from sentsweep.scorers import FeatureScorer, Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, task_folder
from sentsweep.topics import read_prompted_topic_corpus, read_topic_corpus

C_GRID = [2.0 ** t for t in range(-2, 4)]
BINARY_FILES = {
    "mr": ("rt-polarity.pos", "rt-polarity.neg"),
    "cr": ("custrev.pos", "custrev.neg"),
    "subj": ("subj.objective", "subj.subjective"),
    "mpqa": ("mpqa.pos", "mpqa.neg"),
}
TRANSFER_TASKS = (*BINARY_FILES, "trec", "sst2", "topics", "topics_prompted")  # all need sentence vectors
CV_SEED = 1111  # SentEval's default seed


def _latin1_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    return [line.strip() for line in path.read_bytes().decode("latin-1").splitlines() if line.strip()]


def _read_trec(path: Path) -> tuple[list[str], list[str]]:
    sentences, labels = [], []
    for line_number, line in enumerate(_latin1_lines(path), start=1):
        label, separator, text = line.partition(" ")
        if ":" not in label or not separator:
            raise InputError(f"{path}, line {line_number}: expected 'COARSE:fine question', found {line[:40]!r}")
        sentences.append(text)
        labels.append(label.split(":")[0])
    return sentences, labels


def _read_sst(path: Path) -> tuple[list[str], list[str]]:
    sentences, labels = [], []
    for line_number, line in enumerate(_latin1_lines(path), start=1):
        text, separator, label = line.rpartition("\t")
        if not separator or label not in ("0", "1"):
            raise InputError(f"{path}, line {line_number}: expected 'sentence<TAB>0|1', found {line[-40:]!r}")
        sentences.append(text)
        labels.append(label)
    return sentences, labels


def _classifier():
    from sklearn.linear_model import LogisticRegressionCV

    return LogisticRegressionCV(Cs=C_GRID, cv=5, max_iter=2000)


Labelled = tuple[list[str], list]  # sentences and their labels


@register(*BINARY_FILES, "trec", "sst2")
class TransferTask(Task):
    """A SentEval classification task: accuracy of logistic regression on the scorer's features."""

    main_metric = "accuracy"
    splits = ("test",)
    reference = SENTEVAL

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        self.train, self.test = self.read(task_folder(name, path))

    def read(self, folder: Path) -> tuple[Labelled, Labelled | None]:
        """The training set and the test set; no test set (None): 10-fold cross-validation on the training set."""
        if self.name in BINARY_FILES:
            first, second = (_latin1_lines(folder / file) for file in BINARY_FILES[self.name])
            if not first or not second:
                raise InputError(f"{self.name}: {folder} has an empty class file")
            return (first + second, [1] * len(first) + [0] * len(second)), None
        if self.name == "trec":
            return _read_trec(folder / "train_5500.label"), _read_trec(folder / "TREC_10.label")
        return _read_sst(folder / "sentiment-train"), _read_sst(folder / "sentiment-test")

    def evaluate(self, scorer: Scorer | FeatureScorer, split: str = "test") -> TaskResult:
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        check_split(self.name, split, self.splits)
        if not isinstance(scorer, FeatureScorer):
            raise InputError(f"task {self.name!r} needs sentence features, which {type(scorer).__name__} has not")
        sentences, labels = self.train
        features, labels = scorer.features(sentences), np.asarray(labels)
        if self.test is None:
            folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=CV_SEED)
            predictions = cross_val_predict(_classifier(), features, labels, cv=folds)
            correct = predictions == labels
        else:
            classifier = _classifier().fit(features, labels)
            test_sentences, test_labels = self.test
            predictions = classifier.predict(scorer.features(test_sentences))
            correct = predictions == np.asarray(test_labels)
        outcomes = correct.astype(float).tolist()
        metrics = {f"{self.name}_accuracy": 100.0 * float(np.mean(outcomes))}
        if self.main_metric == "f1_macro":
            from sklearn.metrics import f1_score

            metrics[self.main_metric_key] = 100.0 * f1_score(self.test[1], predictions, average="macro")
        return TaskResult(metrics, {f"{self.name}_accuracy": outcomes})


@register("topics")
class TopicClassificationTask(TransferTask):
    """The `topics` task: scored like the others, with F1 macro over topics as its main metric."""

    main_metric = "f1_macro"
    reference = THESIS_REIML_2023

    def read(self, folder: Path) -> tuple[Labelled, Labelled]:
        """train.tsv and test.tsv as (sentences, topics)."""
        train, test = (read_topic_corpus(folder / f"{split}.tsv") for split in ("train", "test"))
        return (train[1], train[0]), (test[1], test[0])


@register("topics_prompted")
class PromptedTopicClassificationTask(TopicClassificationTask):
    """The `topics_prompted` task: the frozen-encoder topic classification on sentences with their topic prompts
    ("prompt ¥ sentence"), the "Prompted (F1)" column of Reiml (2023) Tables 6.14 and 6.16; F1 macro."""


    def read(self, folder: Path) -> tuple[Labelled, Labelled]:
        """train.tsv and test.tsv (topic-labelled, with prompts) as (prompted sentences, labels)."""
        train, test = (read_prompted_topic_corpus(folder / f"{split}.tsv") for split in ("train", "test"))
        return (train[1], train[0]), (test[1], test[0])
