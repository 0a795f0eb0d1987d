"""Small datasets in the Hugging Face hub's repository format of one MTEB task of each type, at the revision MTEB
pins, written as `hf download <repo> --repo-type dataset --revision <rev> --local-dir FOLDER` leaves them (the files,
and `.cache/huggingface/download/<file>.metadata` whose first line is the commit), from the shipped demo data.

Each repository holds what MTEB's loader reads for its task type: split files `datasets` infers splits from
(`<split>.jsonl.gz`: STSBenchmark's, the pair-classification and clustering v1 repositories' one-row form), or a
README.md whose `configs` name each config's files (the retrieval and reranking repositories: `corpus`, `queries`,
`default` with the qrels, and for reranking `top_ranked`).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from sentsweep.data import read_corpus, read_sts_benchmark_file
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR

# Task -> (repository, revision), as mteb 2.26.24's task metadata pins them.
REPOSITORIES = {
    "STSBenchmark": ("mteb/stsbenchmark-sts", "b0fddb56ed78048fa8b90373c8a3cfc37b684831"),
    "SciFact": ("mteb/scifact", "d56462d0e63a25450459c4f213e49ffdb866f7f9"),
    "AskUbuntuDupQuestions": ("mteb/AskUbuntuDupQuestions", "c5691e3c48741d5f83b5cc8e630653d7a8cfc048"),
    "SprintDuplicateQuestions": ("mteb/sprintduplicatequestions-pairclassification",
                                 "d66bd1f72af766a5cc4b0ca5e00c162f89e8cc46"),
    "Banking77Classification": ("mteb/banking77", "0fd18e25b25c072e09e0d92ab615fda904d66300"),
    "TwentyNewsgroupsClustering": ("mteb/twentynewsgroups-clustering", "6125ec4e24fa026cec8a478383ee943acfbd5449"),
}
OTHER_REVISION = "0123456789abcdef0123456789abcdef01234567"


def write_local_dir(folder: Path, files: dict[str, bytes | str], revision: str) -> Path:
    """The repository's `files` under `folder`, with huggingface_hub's `--local-dir` metadata naming `revision`."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        metadata = folder / ".cache" / "huggingface" / "download" / f"{name}.metadata"
        metadata.parent.mkdir(parents=True, exist_ok=True)
        metadata.write_text(f"{revision}\n\"etag\"\n1700000000.0\n", encoding="utf-8")
    return folder


def jsonl(rows: list[dict], compress: bool = False) -> bytes | str:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    return gzip.compress(text.encode("utf-8"), mtime=0) if compress else text


def readme(configs: dict[str, dict[str, str]]) -> str:
    """A dataset card whose YAML `configs` give each config's split files."""
    lines = ["---", "configs:"]
    for config, splits in configs.items():
        lines += [f"- config_name: {config}", "  data_files:"]
        lines += [f"  - split: {split}\n    path: {path}" for split, path in splits.items()]
    return "\n".join(lines + ["---", ""])


def sts_rows(split: str, limit: int | None = None) -> list[dict]:
    """STS benchmark rows as mteb/stsbenchmark-sts holds them, from the demo's sts-<split>.csv."""
    name = {"train": "train", "validation": "dev", "test": "test"}[split]
    pairs = read_sts_benchmark_file(DEMO_DIR / f"sts-{name}.csv")
    rows = [{"split": name, "genre": "demo", "dataset": "demo", "year": "2026", "sid": f"{i:04d}", "score": score,
             "sentence1": first, "sentence2": second}
            for i, (first, second, score) in enumerate(zip(pairs.sentences1, pairs.sentences2, pairs.scores))]
    return rows[:limit]


def stsbenchmark(folder: Path, revision: str = REPOSITORIES["STSBenchmark"][1], limit: int | None = 60) -> Path:
    return write_local_dir(folder, {f"{split}.jsonl.gz": jsonl(sts_rows(split, limit), compress=True)
                                    for split in ("train", "validation", "test")}, revision)


def _sentences() -> list[str]:
    return read_corpus(CORPUS_FILE)


def scifact(folder: Path) -> Path:
    """A retrieval repository (BEIR's files with a card naming the configs): 60 documents, 12 test queries."""
    sentences, rng = _sentences(), random.Random(0)
    corpus = [{"_id": f"d{i}", "title": "", "text": text} for i, text in enumerate(sentences[:60])]
    queries = [{"_id": f"q{i}", "text": sentences[100 + i]} for i in range(16)]
    qrels = {split: [{"query-id": f"q{i}", "corpus-id": f"d{j}", "score": 1}
                     for i in chosen for j in rng.sample(range(60), 2)]
             for split, chosen in (("train", range(12, 16)), ("test", range(12)))}
    return write_local_dir(folder, {
        "README.md": readme({"corpus": {"corpus": "corpus.jsonl"}, "queries": {"queries": "queries.jsonl"},
                             "default": {"train": "qrels/train.jsonl", "test": "qrels/test.jsonl"}}),
        "corpus.jsonl": jsonl(corpus), "queries.jsonl": jsonl(queries),
        **{f"qrels/{split}.jsonl": jsonl(rows) for split, rows in qrels.items()}}, REPOSITORIES["SciFact"][1])


def askubuntu(folder: Path) -> Path:
    """A reranking repository in MTEB's v2 form: corpus, queries, qrels (default) and top_ranked configs; each of 10
    test queries ranks its own 8 candidates, 2 of them relevant."""
    sentences, rng = _sentences(), random.Random(1)
    corpus = [{"id": f"d{i}", "title": "", "text": text} for i, text in enumerate(sentences[:80])]
    queries = [{"id": f"q{i}", "text": sentences[200 + i]} for i in range(10)]
    candidates = {f"q{i}": [f"d{j}" for j in range(8 * i, 8 * i + 8)] for i in range(10)}
    qrels = [{"query-id": query, "corpus-id": document, "score": int(document in rng.sample(ids, 2))}
             for query, ids in candidates.items() for document in ids]
    top_ranked = [{"query-id": query, "corpus-ids": ids} for query, ids in candidates.items()]
    return write_local_dir(folder, {
        "README.md": readme({"corpus": {"test": "corpus/test.jsonl"}, "queries": {"test": "queries/test.jsonl"},
                             "default": {"test": "data/test.jsonl"}, "top_ranked": {"test": "top_ranked/test.jsonl"}}),
        "corpus/test.jsonl": jsonl(corpus), "queries/test.jsonl": jsonl(queries), "data/test.jsonl": jsonl(qrels),
        "top_ranked/test.jsonl": jsonl(top_ranked)}, REPOSITORIES["AskUbuntuDupQuestions"][1])


def sprint_duplicates(folder: Path) -> Path:
    """A pair-classification repository in MTEB's v1 form: one row of parallel lists (sent1, sent2, labels) per split
    file."""
    rows = sts_rows("test")[:60]
    row = {"sent1": [r["sentence1"] for r in rows], "sent2": [r["sentence2"] for r in rows],
           "labels": [int(r["score"] >= 2.5) for r in rows]}
    return write_local_dir(folder, {"test.jsonl.gz": jsonl([row], compress=True)},
                           REPOSITORIES["SprintDuplicateQuestions"][1])


def banking77(folder: Path) -> Path:
    """A classification repository: train and test split files of (text, label, label_text), 3 labels."""
    sentences = _sentences()
    topics = ("cook", "dog", "car")

    def rows(start: int, count: int) -> list[dict]:
        picked = [s for s in sentences[start:] if any(t in s for t in topics)][:count]
        return [{"text": s, "label": next(i for i, t in enumerate(topics) if t in s),
                 "label_text": next(t for t in topics if t in s)} for s in picked]

    return write_local_dir(folder, {"train.jsonl": jsonl(rows(0, 30)), "test.jsonl": jsonl(rows(200, 30))},
                           REPOSITORIES["Banking77Classification"][1])


def twenty_newsgroups(folder: Path) -> Path:
    """A clustering repository in MTEB's v1 form: rows of (sentences, labels) lists, one per sampled set (scored by
    the v1 task, which clusters each row; the .v2 task of the same repository embeds 4% of the documents, two of
    these 60)."""
    sentences = _sentences()
    topics = ("cook", "dog", "car")
    labelled = [(s, t) for s in sentences for t in topics if t in s][:60]
    rows = [{"sentences": [s for s, _ in labelled[i::3]], "labels": [t for _, t in labelled[i::3]]} for i in range(3)]
    return write_local_dir(folder, {"test.jsonl.gz": jsonl(rows, compress=True)},
                           REPOSITORIES["TwentyNewsgroupsClustering"][1])


BUILDERS = {"STSBenchmark": stsbenchmark, "SciFact": scifact, "AskUbuntuDupQuestions": askubuntu,
            "SprintDuplicateQuestions": sprint_duplicates, "Banking77Classification": banking77,
            "TwentyNewsgroupsClustering": twenty_newsgroups}
