"""Duplicate-question retrieval over a corpus, as Wang (2022), "Improving Unsupervised Contrastive Learning for
Sentence Embeddings", chapter 4, evaluates it: Quora and CQADupStack as BEIR releases them (Thakur, Reimers,
Rücklé, Srivastava and Gurevych (2021), "BEIR: A Heterogenous Benchmark for Zero-shot Evaluation of Information
Retrieval Models"). `quora` names the task; 'beir-<dataset>' reads any other BEIR folder the same way.

`beir-cqadupstack` is CQADupStack of Hoogeveen, Verspoor and Baldwin (2015), "CQADupStack: A Benchmark Data
Set for Community Question-Answering Research", as BEIR's `cqadupstack` folder holds it: one BEIR folder per
StackExchange forum (android, english, gaming, gis, mathematica, physics, programmers, stats, tex, unix,
webmasters, wordpress), each searched on its own (queries are titles, documents title + body). Every metric
is reported per forum (`beir-cqadupstack_<forum>_<metric>`) and as the plain mean over the 12 forums
(`beir-cqadupstack_<metric>`), which is what Wang (2022), section 4.2, reports ("the average of the results
for these 12 subforums"). It is not USEB's `cqadupstack` (`sentsweep.tasks.useb`: titles only, MAP@100),
whose numbers differ, hence the separate name.

A BEIR folder holds `corpus.jsonl` ({"_id", "title", "text"} per line; a document is "title text"),
`queries.jsonl` ({"_id", "text"}) and `qrels/<split>.tsv` (a header, then query-id, corpus-id, score; score
> 0 is relevant). Every query with a relevant document retrieves from the whole corpus by exact search in
blocks (no queries x corpus matrix is ever held); as BEIR does, a document with the query's own id is not
counted as retrieved (Quora's questions are both). Metrics x 100, averaged over queries: Recall@k and P@k for
k in 1, 3, 5, 10, 100, 1000 (Wang's k), MRR@10 and nDCG@10 (main metric): binary-relevance
DCG@10 = sum over the relevant documents in the top 10 of 1 / log2(rank + 1), over the DCG@10 of the ideal
ranking (`sentsweep.retrieval_metrics.ndcg_at_k`).
"""

from __future__ import annotations

import json
from pathlib import Path

from sentsweep.data import read_lines
from sentsweep.errors import InputError
from sentsweep.references import BEIR, CQADUPSTACK
from sentsweep.retrieval_metrics import mrr_at_k, ndcg_at_k, precision_at_k, recall_at_k
from sentsweep.scorers import Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split, task_folder

CUTOFFS = (1, 3, 5, 10, 100, 1000)
CQADUPSTACK_FORUMS = ("android", "english", "gaming", "gis", "mathematica", "physics", "programmers", "stats",
                      "tex", "unix", "webmasters", "wordpress")


def read_jsonl(path: Path, required: tuple[str, ...]) -> list[dict]:
    """The objects of a JSON-lines file; a bad line or a missing key is an `InputError` with file and line."""
    records = []
    for line_number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}, line {line_number}: not valid JSON ({error.msg})") from None
        missing = [key for key in required if key not in record]
        if missing:
            raise InputError(f"{path}, line {line_number}: lacks the key(s) {', '.join(missing)}")
        records.append(record)
    if not records:
        raise InputError(f"{path}: empty file")
    return records


def read_qrels(path: Path) -> dict[str, set[str]]:
    """{query id: relevant corpus ids} of a BEIR qrels file (its first line is a header)."""
    relevant: dict[str, set[str]] = {}
    for line_number, line in enumerate(read_lines(path)[1:], start=2):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) < 3:
            raise InputError(f"{path}, line {line_number}: expected query-id, corpus-id, score (tab-separated)")
        try:
            score = float(columns[2])
        except ValueError:
            raise InputError(f"{path}, line {line_number}: score {columns[2]!r} is not a number") from None
        if score > 0:
            relevant.setdefault(columns[0], set()).add(columns[1])
    if not relevant:
        raise InputError(f"{path}: no relevant query-document pair")
    return relevant


@register("quora")
class BeirRetrievalTask(Task):
    """A BEIR retrieval folder: exact top-1000 search per query; Recall@k, P@k, MRR@10, nDCG@10 (main), scored
    on the splits whose qrels the folder holds."""

    main_metric = "ndcg_at_10"
    splits = ("dev", "test")
    reference = BEIR

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path)
        self.splits = tuple(split for split in self.splits if (folder / "qrels" / f"{split}.tsv").is_file())
        if not self.splits:
            raise InputError(f"{name}: {folder} has no qrels/dev.tsv or qrels/test.tsv")
        corpus = read_jsonl(folder / "corpus.jsonl", ("_id", "text"))
        self.document_ids = [str(d["_id"]) for d in corpus]
        self.documents = [f"{d.get('title') or ''} {d['text']}".strip() for d in corpus]
        self.queries = {str(q["_id"]): q["text"] for q in read_jsonl(folder / "queries.jsonl", ("_id", "text"))}
        self.qrels = {split: read_qrels(folder / "qrels" / f"{split}.tsv") for split in self.splits}
        known = set(self.document_ids)
        for split, qrels in self.qrels.items():
            qrels_file = folder / "qrels" / f"{split}.tsv"
            for query_id, documents in qrels.items():
                if query_id not in self.queries:
                    raise InputError(f"{qrels_file}: query id {query_id!r} is not in queries.jsonl")
                if not documents <= known:
                    raise InputError(f"{qrels_file}: corpus id {sorted(documents - known)[0]!r} is not in corpus.jsonl")

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        query_ids = list(self.qrels[split])
        relevant = [self.qrels[split][q] for q in query_ids]
        _, indices = scorer.top_k([self.queries[q] for q in query_ids], self.documents, max(CUTOFFS) + 1)
        ranked = [[self.document_ids[i] for i in row if self.document_ids[i] != q][:max(CUTOFFS)]
                  for q, row in zip(query_ids, indices)]
        metrics = {}
        for k in CUTOFFS:
            metrics[f"{self.name}_recall_at_{k}"] = 100.0 * recall_at_k(ranked, relevant, k)
            metrics[f"{self.name}_precision_at_{k}"] = 100.0 * precision_at_k(ranked, relevant, k)
        metrics[f"{self.name}_mrr_at_10"] = 100.0 * mrr_at_k(ranked, relevant, 10)
        metrics[f"{self.name}_ndcg_at_10"] = 100.0 * ndcg_at_k(ranked, relevant, 10)
        return TaskResult(metrics)


@register("beir-cqadupstack")
class BeirCqaDupStackTask(Task):
    """BEIR's CQADupStack: each of the 12 forum folders scored as a BEIR retrieval task on its own; every
    metric per forum and as the plain mean over the forums (nDCG@10 main, as for `quora`)."""

    main_metric = BeirRetrievalTask.main_metric
    splits = BeirRetrievalTask.splits
    reference = CQADUPSTACK

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        folder = task_folder(name, path)
        missing = [forum for forum in CQADUPSTACK_FORUMS if not (folder / forum).is_dir()]
        if missing:
            hint = (f"; {folder} looks like one forum's folder: score it alone as 'beir-{folder.name}'"
                    if (folder / "corpus.jsonl").is_file() else "")
            raise InputError(f"{name}: {folder} lacks the forum folder(s) {', '.join(missing)} (BEIR's cqadupstack "
                             f"holds {', '.join(CQADUPSTACK_FORUMS)}){hint}")
        self.forums = {forum: BeirRetrievalTask(f"{name}_{forum}", str(folder / forum)) for forum in CQADUPSTACK_FORUMS}
        self.splits = tuple(split for split in self.splits if all(split in t.splits for t in self.forums.values()))
        if not self.splits:
            raise InputError(f"{name}: no split whose qrels every forum folder of {folder} holds")

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        per_forum = {forum: task.evaluate(scorer, split).metrics for forum, task in self.forums.items()}
        metrics = {key: value for forum_metrics in per_forum.values() for key, value in forum_metrics.items()}
        for key in per_forum[CQADUPSTACK_FORUMS[0]]:
            metric = key.removeprefix(f"{self.name}_{CQADUPSTACK_FORUMS[0]}_")
            values = [per_forum[forum][f"{self.name}_{forum}_{metric}"] for forum in CQADUPSTACK_FORUMS]
            metrics[f"{self.name}_{metric}"] = sum(values) / len(values)
        return TaskResult(metrics)
