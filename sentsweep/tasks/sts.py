"""Semantic textual similarity tasks: 100 x Spearman's rho between the method's pair similarities and the
gold scores, rho = Pearson(rank(similarities), rank(gold)) over the pairs, tied values sharing their mean rank.

- `stsb`: the STS benchmark of Cer, Diab, Agirre, Lopez-Gazpio and Specia (2017), "SemEval-2017 Task 1:
  Semantic Textual Similarity Multilingual and Crosslingual Focused Evaluation"; its folder (sts-dev.csv /
  sts-test.csv), splits dev and test;
- `sickr`: SICK of Marelli et al. (2014), "A SICK cure for the evaluation of compositional distributional
  semantic models", scored on relatedness (SICK-R); splits train / dev (TRIAL) / test by its SemEval_set column;
- `sts12` ... `sts16`: Agirre et al. (2012), "SemEval Semantic Textual Similarity tasks 2012-2016", as
  SentEval's folders hold them (Conneau and Kiela (2018), "SentEval: An Evaluation Toolkit for Universal
  Sentence Representations"): STS.input.<subset>.txt, "sentence1<TAB>sentence2" per line, and
  STS.gs.<subset>.txt, the gold score per line, blank where a pair has none, which drops the pair; test only.
  As SentEval does, each subset is scored on its own and averaged twice: `<task>_mean` (plain mean over
  subsets) and `<task>_wmean` (weighted by the subsets' numbers of pairs: SentEval's "ALL", the main metric).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sentsweep.data import (
    SICK_SPLIT_NAMES,
    ScoredPairs,
    parse_score,
    read_lines,
    read_sick_file,
    read_sts_benchmark_file,
    sts_benchmark_files,
)
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.references import SEMEVAL_STS, SICK, STS_BENCHMARK
from sentsweep.scorers import EmbeddingScorer, Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, task_folder

SENTEVAL_STS_SUBSETS = {
    "sts12": ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"],
    "sts13": ["FNWN", "HDL", "OnWN"],
    "sts14": ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"],
    "sts15": ["answers-forums", "answers-students", "belief", "headlines", "images"],
    "sts16": ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"],
}


def sts_spearman(scorer: Scorer, pairs: ScoredPairs) -> float:
    """100 x Spearman's rho between the scorer's pair similarities and the gold scores."""
    similarities = scorer.pair_similarities(pairs.sentences1, pairs.sentences2)
    return 100.0 * spearman(similarities, np.asarray(pairs.scores))


class StsEvaluator:
    """Scores a model on scored pairs: 100 x Spearman(cosine(u_i, v_i), gold_i), each distinct sentence
    encoded once (the training loop's dev and test evaluation)."""

    def __init__(self, pairs: ScoredPairs, batch_size: int = 64) -> None:
        self.pairs = pairs
        self.batch_size = batch_size

    def __call__(self, model) -> float:
        return sts_spearman(EmbeddingScorer(model, self.batch_size), self.pairs)


@register("stsb")
class StsBenchmarkTask(Task):
    """The STS benchmark: 100 x Spearman on its dev or test file."""

    name = "stsb"
    main_metric = "spearman"
    splits = ("dev", "test")
    reference = STS_BENCHMARK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        files = sts_benchmark_files(path)
        self.pairs = {split: read_sts_benchmark_file(files[split]) for split in self.splits}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        return TaskResult({self.main_metric_key: sts_spearman(scorer, self.pairs[split])})


@register("sickr")
class SickRelatednessTask(Task):
    """SICK-R: 100 x Spearman on the relatedness scores of the splits the file holds (test at least)."""

    name = "sickr"
    main_metric = "spearman"
    splits = tuple(SICK_SPLIT_NAMES)
    reference = SICK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        read_sick_file(path)  # checks the header and every row
        lines = read_lines(path)
        header = lines[0].split("\t")
        column = header.index("SemEval_set") if "SemEval_set" in header else None
        present = {line.split("\t")[column] for line in lines[1:] if line.strip()} if column is not None else set()
        self.splits = tuple(split for split, label in SICK_SPLIT_NAMES.items() if label in present)
        if "test" not in self.splits:
            raise InputError(f"{name}: {path} has no row of the test split (SemEval_set TEST)")
        self.pairs = {split: read_sick_file(path, split) for split in self.splits}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        return TaskResult({self.main_metric_key: sts_spearman(scorer, self.pairs[split])})


def read_senteval_sts_subset(folder: Path, subset: str) -> ScoredPairs:
    """One SentEval STS subset: pairs from STS.input.<subset>.txt, gold from STS.gs.<subset>.txt."""
    input_file, gold_file = folder / f"STS.input.{subset}.txt", folder / f"STS.gs.{subset}.txt"
    input_lines, gold_lines = read_lines(input_file), read_lines(gold_file)
    if len(input_lines) != len(gold_lines):
        raise InputError(f"{gold_file}: {len(gold_lines)} lines, but {input_file.name} has {len(input_lines)}")
    sentences1, sentences2, scores = [], [], []
    for line_number, (pair, gold) in enumerate(zip(input_lines, gold_lines), start=1):
        if not gold.strip():
            continue
        columns = pair.split("\t")
        if len(columns) < 2:
            raise InputError(f"{input_file}, line {line_number}: expected two tab-separated sentences")
        scores.append(parse_score(gold.strip(), gold_file, line_number))
        sentences1.append(columns[0])
        sentences2.append(columns[1])
    if not scores:
        raise InputError(f"{gold_file}: no scored pairs")
    return ScoredPairs(sentences1, sentences2, scores, source=str(input_file))


@register(*SENTEVAL_STS_SUBSETS)
class SentEvalStsTask(Task):
    """STS12-16: 100 x Spearman per subset, then their mean and their mean weighted by size (main)."""

    name = "senteval-sts"
    main_metric = "wmean"
    splits = ("test",)
    reference = SEMEVAL_STS

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path)
        missing = [s for s in SENTEVAL_STS_SUBSETS[name] if not (folder / f"STS.input.{s}.txt").is_file()]
        if missing:
            raise InputError(f"{name}: {folder} lacks STS.input.<subset>.txt for subset(s) {', '.join(missing)}")
        self.subsets = {subset: read_senteval_sts_subset(folder, subset) for subset in SENTEVAL_STS_SUBSETS[name]}

    def evaluate(self, scorer: Scorer, split: str = "test") -> TaskResult:
        check_split(self.name, split, self.splits)
        scores = {subset: sts_spearman(scorer, pairs) for subset, pairs in self.subsets.items()}
        sizes = [len(pairs) for pairs in self.subsets.values()]
        metrics = {f"{self.name}_{subset}": score for subset, score in scores.items()}
        metrics[f"{self.name}_mean"] = float(np.mean(list(scores.values())))
        metrics[f"{self.name}_wmean"] = float(np.average(list(scores.values()), weights=sizes))
        return TaskResult(metrics)
