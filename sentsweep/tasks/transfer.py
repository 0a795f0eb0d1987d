"""SentEval-style transfer classification: logistic regression on frozen sentence features (scikit-learn).

Files as SentEval's data/downstream folders hold them (read as Latin-1, as SentEval does):
- `mr` (rt-polarity.pos / .neg), `cr` (custrev.pos / .neg), `subj` (subj.objective / .subjective), `mpqa`
  (mpqa.pos / .neg): one sentence per line, two classes; accuracy of 10-fold stratified cross-validation;
- `trec` (train_5500.label, TREC_10.label: "COARSE:fine question"): the 6 coarse classes; train, then test;
- `sst2` (sentiment-train / -dev / -test: "sentence<TAB>label"): train, test;
- `topics` (train.tsv, test.tsv: "topic<TAB>sentence", thesis 000 section 5.6.2): the frozen-encoder topic
  classification, scored by F1 macro (main) and accuracy.
In every fold and on every training set the L2 strength C is chosen by an inner 5-fold cross-validation over
SentEval's grid 2^-2 .. 2^3 (`LogisticRegressionCV`). Accuracy x 100; each item's outcome (1 correct, 0 not)
is kept for paired tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sentsweep.errors import InputError
from sentsweep.tasks import TaskResult
from sentsweep.tasks.common import check_split, task_folder
from sentsweep.topics import read_topic_corpus

C_GRID = [2.0 ** t for t in range(-2, 4)]
BINARY_FILES = {
    "mr": ("rt-polarity.pos", "rt-polarity.neg"),
    "cr": ("custrev.pos", "custrev.neg"),
    "subj": ("subj.objective", "subj.subjective"),
    "mpqa": ("mpqa.pos", "mpqa.neg"),
}
TRANSFER_TASKS = (*BINARY_FILES, "trec", "sst2", "topics")  # all need sentence vectors
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


class TransferTask:
    MAIN_METRIC = "accuracy"
    splits = ("test",)

    def __init__(self, name: str, path: str) -> None:
        self.name, self.main_metric = name, f"{name}_{self.MAIN_METRIC}"
        folder = task_folder(name, path)
        if name in BINARY_FILES:
            first, second = (_latin1_lines(folder / file) for file in BINARY_FILES[name])
            if not first or not second:
                raise InputError(f"{name}: {folder} has an empty class file")
            self.train = (first + second, [1] * len(first) + [0] * len(second))
            self.test = None
        elif name == "trec":
            self.train, self.test = _read_trec(folder / "train_5500.label"), _read_trec(folder / "TREC_10.label")
        elif name == "sst2":
            self.train = _read_sst(folder / "sentiment-train")
            self.test = _read_sst(folder / "sentiment-test")
        else:
            self.train, self.test = (tuple(reversed(read_topic_corpus(folder / f"{split}.tsv"))) for split in ("train", "test"))

    def evaluate(self, scorer, split: str = "test"):
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        check_split(self.name, split, self.splits)
        if not hasattr(scorer, "features"):
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
        if self.MAIN_METRIC == "f1_macro":
            from sklearn.metrics import f1_score

            metrics[self.main_metric] = 100.0 * f1_score(self.test[1], predictions, average="macro")
        return TaskResult(metrics, {f"{self.name}_accuracy": outcomes})


class TopicClassificationTask(TransferTask):
    """The `topics` task: scored like the others, with F1 macro over topics as its main metric."""

    MAIN_METRIC = "f1_macro"
