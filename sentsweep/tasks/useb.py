"""The four USEB tasks of Wang, Reimers and Gurevych (2021), "TSDAE: Using Transformer-based Sequential
Denoising Auto-Encoder for Unsupervised Sentence Embedding Learning", section 4.1, read from the release's
data-eval/<task> folders (https://github.com/UKPLab/useb): `askubuntu`, `cqadupstack`, `twitterpara`, `scidocs`.

Titles are the texts; every metric is x 100, averaged over a task's sub-datasets as the paper does; splits dev
and test (TwitterPara test only); the main metric is average precision (MAP@100 for CQADupStack). The data sets:
AskUbuntu of Lei et al. (2016), "Semi-supervised Question Retrieval with Gated Convolutions"; CQADupStack of
Hoogeveen et al. (2015), "CQADupStack: A Benchmark Data Set for Community Question-Answering Research";
TwitterPara of Xu et al. (2015), "SemEval-2015 Task 1: Paraphrase and Semantic Similarity in Twitter (PIT)";
SciDocs of Cohan et al. (2020), "SPECTER: Document-level Representation Learning using Citation-informed
Transformers". Each task's files and metrics: docs/evaluation.md, "USEB tasks".

    task = build_task("askubuntu", "data-eval/askubuntu")
    task.evaluate(scorer, "test").metrics["askubuntu_map"]
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from sentsweep.data import read_lines
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.references import ASKUBUNTU, CQADUPSTACK, SCIDOCS, TWITTER_PARA
from sentsweep.retrieval_metrics import average_precision, mrr_at_k, ndcg_at_k, precision_at_k
from sentsweep.scorers import Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, read_json, task_folder

FILE_SPLITS = {"dev": "valid", "test": "test"}


def _columns(path: Path, line_number: int, line: str, count: int, what: str) -> list[str]:
    columns = line.split("\t")
    if len(columns) < count:
        raise InputError(f"{path}, line {line_number}: expected {count} tab-separated columns ({what}), "
                         f"found {len(columns)}")
    return columns


@register("askubuntu")
class AskUbuntuTask(Task):
    """AskUbuntu: rerank each query's 20 BM25 candidates; MAP, P@1, P@5, MRR."""

    main_metric = "map"
    splits = ("dev", "test")
    reference = ASKUBUNTU

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path, ("text_tokenized.txt", "dev.txt", "test.txt"))
        pool_file = folder / "text_tokenized.txt"
        self.titles = {}
        for line_number, line in enumerate(read_lines(pool_file), start=1):
            if line.strip():
                columns = _columns(pool_file, line_number, line, 2, "qid, title, body")
                self.titles[columns[0].strip()] = columns[1].strip()
        self.queries = {split: self._read_queries(folder / f"{split}.txt") for split in self.splits}

    def _read_queries(self, path: Path) -> list[tuple[str, set[str], list[str]]]:
        """(query id, relevant ids, candidates in BM25 order) for each query with a relevant question."""
        queries = []
        for line_number, line in enumerate(read_lines(path), start=1):
            if not line.strip():
                continue
            qid, similar, candidates, bm25 = _columns(path, line_number, line, 4,
                                                      "qid, similar, candidates, BM25 scores")[:4]
            candidates = candidates.split()
            try:
                bm25_scores = [float(value) for value in bm25.split()]
            except ValueError:
                raise InputError(f"{path}, line {line_number}: BM25 scores {bm25!r} are not numbers") from None
            if len(bm25_scores) != len(candidates):
                raise InputError(f"{path}, line {line_number}: {len(candidates)} candidates but "
                                 f"{len(bm25_scores)} BM25 scores")
            unknown = [q for q in [qid.strip(), *candidates] if q not in self.titles]
            if unknown:
                raise InputError(f"{path}, line {line_number}: question id {unknown[0]!r} is not in text_tokenized.txt")
            order = np.argsort(-np.asarray(bm25_scores), kind="stable")
            if similar.split():
                queries.append((qid.strip(), set(similar.split()), [candidates[i] for i in order]))
        if not queries:
            raise InputError(f"{path}: no query with a relevant question")
        return queries

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        queries = self.queries[split]
        scores = scorer.candidate_similarities(
            [self.titles[qid] for qid, _, _ in queries],
            [[self.titles[c] for c in candidates] for _, _, candidates in queries],
        )
        ranked, relevant, per_query_ap = [], [], []
        for (_, similar, candidates), candidate_scores in zip(queries, scores):
            order = np.argsort(-candidate_scores, kind="stable")
            ranked.append([candidates[i] for i in order])
            relevant.append(similar)
            per_query_ap.append(average_precision(candidate_scores, [int(c in similar) for c in candidates]))
        metrics = {
            f"{self.name}_map": 100.0 * float(np.mean(per_query_ap)),
            f"{self.name}_p_at_1": 100.0 * precision_at_k(ranked, relevant, 1),
            f"{self.name}_p_at_5": 100.0 * precision_at_k(ranked, relevant, 5),
            f"{self.name}_mrr": 100.0 * mrr_at_k(ranked, relevant, len(ranked[0])),
        }
        return TaskResult(metrics, {f"{self.name}_ap": per_query_ap})


@register("cqadupstack")
class CqaDupStackTask(Task):
    """CQADupStack: retrieve duplicates within each forum; MAP@100 and nDCG@10, averaged over forums."""

    main_metric = "map_at_100"
    splits = ("dev", "test")
    reference = CQADUPSTACK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        if (Path(path) / "android" / "corpus.jsonl").is_file():
            raise InputError(f"{name}: {path} is BEIR's CQADupStack (a folder per forum with corpus.jsonl); "
                             f"{name!r} reads USEB's corpus.json and retrieval_split.json, 'beir-cqadupstack' "
                             f"reads BEIR's folders")
        folder = task_folder(name, path, ("corpus.json", "retrieval_split.json"))
        self.corpus = read_json(folder / "corpus.json")
        self.split_queries = read_json(folder / "retrieval_split.json")
        for split in self.splits:
            forums = self.split_queries.get(FILE_SPLITS[split])
            if not isinstance(forums, dict) or not forums:
                raise InputError(f"{folder / 'retrieval_split.json'}: no forums under {FILE_SPLITS[split]!r}")
            for forum, qrels in forums.items():
                if forum not in self.corpus:
                    raise InputError(f"{folder / 'retrieval_split.json'}: forum {forum!r} is not in corpus.json")
                unknown = [q for q, dids in qrels.items() for q in [q, *dids] if q not in self.corpus[forum]]
                if unknown:
                    raise InputError(f"{folder / 'retrieval_split.json'}: {forum} question id {unknown[0]!r} "
                                     f"is not in corpus.json")

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        metrics, per_query_ap = {}, []
        for forum, qrels in self.split_queries[FILE_SPLITS[split]].items():
            query_ids = list(qrels)
            document_ids = [d for d in self.corpus[forum] if d not in qrels]
            scores, indices = scorer.top_k([self.corpus[forum][q] for q in query_ids],
                                           [self.corpus[forum][d] for d in document_ids], 100)
            ranked = [[document_ids[i] for i in row] for row in indices]
            relevant = [set(qrels[q]) for q in query_ids]
            forum_ap = [average_precision(row_scores, [int(d in rel) for d in row])
                        for row_scores, row, rel in zip(scores, ranked, relevant)]
            per_query_ap.extend(forum_ap)
            metrics[f"{self.name}_{forum}_map_at_100"] = 100.0 * float(np.mean(forum_ap))
            metrics[f"{self.name}_{forum}_ndcg_at_10"] = 100.0 * ndcg_at_k(ranked, relevant, 10)
        for metric in ("map_at_100", "ndcg_at_10"):
            metrics[f"{self.name}_{metric}"] = float(np.mean([v for k, v in metrics.items() if k.endswith(metric)]))
        return TaskResult(metrics, {f"{self.name}_ap": per_query_ap})


@register("twitterpara")
class TwitterParaTask(Task):
    """TwitterPara: AP and Spearman of the pair similarities, per corpus and averaged."""

    main_metric = "ap"
    splits = ("test",)
    reference = TWITTER_PARA
    UNDECIDED_VOTES = 3  # of 5 annotators: a pair with more votes is a paraphrase, one with fewer is not

    @classmethod
    def is_paraphrase(cls, label: int) -> bool:
        """Whether a pair of `label` votes (of 5) is a paraphrase: more votes than UNDECIDED_VOTES."""
        return label > cls.UNDECIDED_VOTES

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path, ("Twitter_URL_Corpus_test.txt", "test.data"))
        self.corpora = {"twitterurl": self._read(folder / "Twitter_URL_Corpus_test.txt", 0, 1, 2),
                        "pit": self._read(folder / "test.data", 2, 3, 4)}

    @staticmethod
    def _read(path: Path, first: int, second: int, label_column: int) -> tuple[list[str], list[str], list[int]]:
        sentences1, sentences2, labels = [], [], []
        for line_number, line in enumerate(read_lines(path), start=1):
            if not line.strip():
                continue
            columns = _columns(path, line_number, line.strip(), label_column + 1, "two sentences and a label")
            raw = columns[label_column].strip()
            try:
                value = ast.literal_eval(raw)
                label = int(value[0] if isinstance(value, tuple) else value)
            except (ValueError, SyntaxError, TypeError, IndexError):
                message = f"{path}, line {line_number}: label {raw!r} is neither a number nor '(n, m)'"
                raise InputError(message) from None
            sentences1.append(columns[first])
            sentences2.append(columns[second])
            labels.append(label)
        if not labels:
            raise InputError(f"{path}: empty file, no sentence pairs")
        return sentences1, sentences2, labels

    def evaluate(self, scorer: Scorer, split: str = "test") -> TaskResult:
        check_split(self.name, split, self.splits)
        metrics = {}
        for corpus, (sentences1, sentences2, labels) in self.corpora.items():
            similarities = scorer.pair_similarities(sentences1, sentences2)
            decided = [i for i, label in enumerate(labels) if label != self.UNDECIDED_VOTES]
            metrics[f"{self.name}_{corpus}_ap"] = 100.0 * average_precision(
                similarities[decided], [int(self.is_paraphrase(labels[i])) for i in decided])
            metrics[f"{self.name}_{corpus}_spearman"] = 100.0 * spearman(similarities, 20.0 * np.asarray(labels))
        for metric in ("ap", "spearman"):
            per_corpus = [metrics[f"{self.name}_{corpus}_{metric}"] for corpus in self.corpora]
            metrics[f"{self.name}_{metric}"] = float(np.mean(per_corpus))
        return TaskResult(metrics)


@register("scidocs")
class SciDocsTask(Task):
    """SciDocs: rerank each query's candidates; trec_eval MAP per subtask, averaged over the four."""

    main_metric = "map"
    splits = ("dev", "test")
    reference = SCIDOCS

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path, ("data.json",))
        data = read_json(folder / "data.json")
        missing = [key for key in ("corpus", *FILE_SPLITS.values()) if key not in data]
        if missing:
            raise InputError(f"{folder / 'data.json'}: lacks the key(s) {', '.join(missing)}")
        self.titles = {pid: (paper or {}).get("title") or "" for pid, paper in data["corpus"].items()}
        self.qrels = {split: data[FILE_SPLITS[split]] for split in self.splits}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        metrics, per_query_ap = {}, []
        for subtask, qrels in self.qrels[split].items():
            queries = [q for q in qrels if self.titles.get(q)]
            candidates = [[d for d in qrels[q] if self.titles.get(d)] for q in queries]
            scores = scorer.candidate_similarities([self.titles[q] for q in queries],
                                                   [[self.titles[d] for d in c] for c in candidates])
            subtask_ap = [
                average_precision(s, [int(qrels[q][d] > 0) for d in c],
                                  relevant_total=sum(rel > 0 for rel in qrels[q].values()))
                for q, c, s in zip(queries, candidates, scores)
            ]
            per_query_ap.extend(subtask_ap)
            metrics[f"{self.name}_{subtask}_map"] = 100.0 * float(np.mean(subtask_ap))
        metrics[self.main_metric_key] = float(np.mean([metrics[f"{self.name}_{s}_map"] for s in self.qrels[split]]))
        return TaskResult(metrics, {f"{self.name}_ap": per_query_ap})
