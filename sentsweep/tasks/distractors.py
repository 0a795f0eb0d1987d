"""Sentence retrieval with distractors, as Malmberg (2021), "Evaluating semantic similarity using sentence
embeddings", sections 3.2.1 and 3.4.3, builds it: find the one right sentence of a query within its own pool.

- `squad`: a SQuAD v1.1 JSON file (Rajpurkar, Zhang, Lopyrev and Liang (2016), "SQuAD: 100,000+ Questions for
  Machine Comprehension of Text"); each paragraph ("context") is cut into sentences, the sentence holding a
  question's first answer (its answer_start) is the positive and the paragraph's other sentences are the
  distractors; single-sentence paragraphs are left out (their accuracy would be 1 by construction). The
  sentence splitter is the project's own (end punctuation, then space, then an upper-case letter, digit or
  quote), since NLTK's punkt data cannot be assumed.
- `distractors`: JSON lines {"query": ..., "candidates": [...], "positive": index} for any other pools.
Metrics x 100, averaged over queries: top-1 accuracy (main: 1 where the positive is the best-scored
candidate, the first of them on a tie), the chance baseline mean(1 / pool size), MRR (1 / the positive's rank,
counting the candidates that score strictly higher); per-query top-1 outcomes are kept for paired tests.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from pathlib import Path

import numpy as np

from sentsweep.errors import InputError
from sentsweep.references import SQUAD, THESIS_MALMBERG_2021
from sentsweep.retrieval_metrics import top1_accuracy
from sentsweep.scorers import Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, read_json
from sentsweep.tasks.retrieval import read_jsonl

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of `text`, covering it without gaps."""
    starts = [0] + [match.end() for match in _SENTENCE_END.finditer(text)]
    ends = starts[1:] + [len(text)]
    return [(start, end) for start, end in zip(starts, ends) if text[start:end].strip()]


class Pools:
    """Queries, each with its own candidate list and the index of the one right candidate."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.candidates: list[list[str]] = []
        self.positives: list[int] = []

    def add(self, query: str, candidates: list[str], positive: int) -> None:
        self.queries.append(query)
        self.candidates.append(candidates)
        self.positives.append(positive)


def squad_pools(path: Path) -> Pools:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise InputError(f"{path}: not a SQuAD file (no top-level 'data' list)")
    pools = Pools()
    for article in data["data"]:
        for paragraph in article.get("paragraphs", []):
            context = paragraph.get("context", "")
            spans = sentence_spans(context)
            if len(spans) < 2:
                continue
            sentences = [context[start:end].strip() for start, end in spans]
            for qa in paragraph.get("qas", []):
                if not qa.get("answers"):
                    continue
                answer_start = qa["answers"][0].get("answer_start")
                if not isinstance(answer_start, int) or not 0 <= answer_start < len(context):
                    raise InputError(f"{path}: question {qa.get('id')!r} has answer_start {answer_start!r} outside "
                                     f"its context of {len(context)} characters")
                positive = next(i for i, (start, end) in enumerate(spans) if start <= answer_start < end)
                pools.add(qa["question"], sentences, positive)
    if not pools.queries:
        raise InputError(f"{path}: no question in a paragraph of two or more sentences")
    return pools


def jsonl_pools(path: Path) -> Pools:
    pools = Pools()
    for line_number, record in enumerate(read_jsonl(path, ("query", "candidates", "positive")), start=1):
        candidates, positive = record["candidates"], record["positive"]
        if not isinstance(positive, int) or not 0 <= positive < len(candidates):
            raise InputError(f"{path}, record {line_number}: positive {positive!r} is not an index into its "
                             f"{len(candidates)} candidates")
        pools.add(record["query"], candidates, positive)
    return pools


class _DistractorTask(Task):
    """Pools read by `read_pools`, scored by top-1 accuracy (main), its chance baseline and MRR."""

    main_metric = "top1"
    splits = ("test",)

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        self.pools = self.read_pools(Path(path))

    @staticmethod
    @abstractmethod
    def read_pools(path: Path) -> Pools:
        """The pools of the file at `path`."""

    def evaluate(self, scorer: Scorer, split: str = "test") -> TaskResult:
        check_split(self.name, split, self.splits)
        scores = scorer.candidate_similarities(self.pools.queries, self.pools.candidates)
        top1 = top1_accuracy(scores, self.pools.positives)
        reciprocal_ranks = [1.0 / (1 + int(np.sum(s > s[p]))) for s, p in zip(scores, self.pools.positives)]
        metrics = {
            f"{self.name}_top1": 100.0 * top1["accuracy"],
            f"{self.name}_chance": 100.0 * top1["chance"],
            f"{self.name}_mrr": 100.0 * float(np.mean(reciprocal_ranks)),
        }
        return TaskResult(metrics, {f"{self.name}_top1": [float(x) for x in top1["per_query"]]})


@register("squad")
class SquadDistractorsTask(_DistractorTask):
    """Questions of a SQuAD v1.1 file against the sentences of their paragraph."""

    reference = SQUAD
    read_pools = staticmethod(squad_pools)


@register("distractors")
class DistractorPoolsTask(_DistractorTask):
    """Pools of a JSON-lines file, the protocol of Malmberg (2021) on any data."""

    reference = THESIS_MALMBERG_2021
    read_pools = staticmethod(jsonl_pools)
