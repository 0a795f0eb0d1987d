"""Semantic textual similarity tasks: 100 x Spearman's rho between the method's pair similarities and the
gold scores, the similarities rounded to 1e-6 before they are ranked (`sentsweep.encoding.spearman`).

- `stsb`: the STS benchmark of Cer et al. (2017), "SemEval-2017 Task 1: Semantic Textual Similarity Multilingual
  and Crosslingual Focused Evaluation", splits dev and test;
- `sickr`: SICK-R of Marelli et al. (2014), "A SICK cure for the evaluation of compositional distributional semantic
  models";
- `sts12` ... `sts16`: Agirre et al. (2012), "SemEval Semantic Textual Similarity tasks 2012-2016", as SentEval's
  folders hold them, test only.

Each task's files, splits and metrics: docs/evaluation.md, "STS tasks".

    task = build_task("stsb", "data/stsbenchmark")
    task.evaluate(scorer, "test").metrics["stsb_spearman"]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sentsweep.data import (
    SEMEVAL_STS_SCALE,
    SICK_SEMEVAL_FILES,
    SICK_SPLIT_NAMES,
    ScoredPairs,
    check_rankable,
    parse_score,
    read_lines,
    read_sick_file,
    read_sts_benchmark_file,
    sick_splits,
    sts_benchmark_files,
)
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.references import SEMEVAL_STS, SICK, STS_BENCHMARK
from sentsweep.scorers import EmbeddingScorer, Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, task_folder

# Subsets of each year, as SentEval's senteval/sts.py and data/downstream/get_transfer_data.bash name them.
SENTEVAL_STS_SUBSETS = {
    "sts12": ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"],
    "sts13": ["FNWN", "headlines", "OnWN"],  # SentEval's STS13 has no SMT subset (not distributed)
    "sts14": ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"],
    "sts15": ["answers-forums", "answers-students", "belief", "headlines", "images"],
    "sts16": ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"],
}


def pair_similarities(scorer: Scorer, pairs: ScoredPairs) -> np.ndarray:
    """The scorer's similarity of each pair, in the pairs' order."""
    return np.asarray(scorer.pair_similarities(pairs.sentences1, pairs.sentences2), dtype=np.float64)


def sts_spearman(scorer: Scorer, pairs: ScoredPairs) -> float:
    """100 x Spearman's rho between the scorer's pair similarities and the gold scores."""
    return 100.0 * spearman(pair_similarities(scorer, pairs), np.asarray(pairs.scores))


def pooled_spearman(similarities: list[np.ndarray], pairs: list[ScoredPairs]) -> float:
    """100 x Spearman's rho over the pairs of several sets together: their similarities and gold scores
    concatenated, ranked as one set."""
    return 100.0 * spearman(np.concatenate(similarities), np.concatenate([np.asarray(p.scores) for p in pairs]))


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

    main_metric = "spearman"
    splits = ("dev", "test")
    reference = STS_BENCHMARK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        files = sts_benchmark_files(path)
        self.pairs = {split: check_rankable(read_sts_benchmark_file(files[split])) for split in self.splits}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        return TaskResult({self.main_metric_key: sts_spearman(scorer, self.pairs[split])})


@register("sickr")
class SickRelatednessTask(Task):
    """SICK-R: 100 x Spearman on the relatedness scores of the splits the path holds (test at least); on test,
    with all three splits present, also the Spearman over all the release's pairs pooled (`sickr_all_spearman`)."""

    main_metric = "spearman"
    splits = tuple(SICK_SPLIT_NAMES)
    reference = SICK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        self.splits = sick_splits(path)
        if "test" not in self.splits:
            raise InputError(
                f"{name}: {path} holds no test pairs: give the full release SICK.txt (its SemEval_set column "
                f"marks TEST), SemEval 2014's {SICK_SEMEVAL_FILES['test']}, or a folder holding either"
                + ("" if self.splits else "; a file without a SemEval_set column cannot be split"))
        self.pairs = {split: check_rankable(read_sick_file(path, split)) for split in self.splits}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        similarities = {split: pair_similarities(scorer, self.pairs[split])}
        gold = np.asarray(self.pairs[split].scores)
        metrics = {self.main_metric_key: 100.0 * spearman(similarities[split], gold)}
        if split == "test" and set(self.splits) == set(SICK_SPLIT_NAMES):
            for other in self.splits:
                if other not in similarities:
                    similarities[other] = pair_similarities(scorer, self.pairs[other])
            metrics[f"{self.name}_all_spearman"] = pooled_spearman(
                [similarities[s] for s in self.splits], [self.pairs[s] for s in self.splits])
        return TaskResult(metrics)


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
        scores.append(parse_score(gold.strip(), gold_file, line_number, SEMEVAL_STS_SCALE))
        sentences1.append(columns[0])
        sentences2.append(columns[1])
    if not scores:
        raise InputError(f"{gold_file}: no scored pairs")
    return check_rankable(ScoredPairs(sentences1, sentences2, scores, source=str(input_file)))


@register(*SENTEVAL_STS_SUBSETS)
class SentEvalStsTask(Task):
    """STS12-16: 100 x Spearman per subset, then their mean, their mean weighted by size (main), and the
    Spearman over all the year's pairs pooled."""

    main_metric = "wmean_spearman"
    splits = ("test",)
    reference = SEMEVAL_STS

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path)
        expected = SENTEVAL_STS_SUBSETS[name]
        missing = [s for s in expected if not (folder / f"STS.input.{s}.txt").is_file()]
        if missing:
            present = sorted(f.name for f in folder.glob("STS.input.*.txt"))
            raise InputError(
                f"{name}: {folder} lacks STS.input.<subset>.txt for subset(s) {', '.join(missing)} (SentEval's "
                f"{name.upper()}-en-test holds {', '.join(expected)}; found: {', '.join(present) or 'none'})")
        self.subsets = {subset: read_senteval_sts_subset(folder, subset) for subset in expected}

    def evaluate(self, scorer: Scorer, split: str = "test") -> TaskResult:
        check_split(self.name, split, self.splits)
        similarities = {subset: pair_similarities(scorer, pairs) for subset, pairs in self.subsets.items()}
        scores = {subset: 100.0 * spearman(similarities[subset], np.asarray(pairs.scores))
                  for subset, pairs in self.subsets.items()}
        sizes = [len(pairs) for pairs in self.subsets.values()]
        metrics = {f"{self.name}_{subset}_spearman": score for subset, score in scores.items()}
        metrics[f"{self.name}_mean_spearman"] = float(np.mean(list(scores.values())))
        metrics[f"{self.name}_wmean_spearman"] = float(np.average(list(scores.values()), weights=sizes))
        metrics[f"{self.name}_pooled_spearman"] = pooled_spearman(list(similarities.values()),
                                                                  list(self.subsets.values()))
        return TaskResult(metrics)
