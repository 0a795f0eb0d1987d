"""SimCSE's loss, NT-Xent against BCE, with BERT and BM25 as baselines (Wang (2022), §5.3.3, Tables 5.9/5.10).

Stages (independent rows of the two tables):
- "SimCSE losses": `simcse` (NT-Xent) and `simcse_bce` (eq. 2.10) on Table 5.3's basic setup, one epoch, the
  checkpoint of the lowest validation loss, seeds 1, 7, 42;
- "baselines": "Bert-base-uncased" (`frozen_encoder`, the --model as released, Table 5.3's average pooling) and
  BM25 (`bm25`, Pyserini's k1 = 0.9, b = 0.4: Wang 2022 §5.2.1).

Table 5.9 scores STS-B (the --sts-dir test split) and STS-Avg; Table 5.10 Recall@100 on Quora and CQADupStack:
give them with --eval-task quora=BEIR/quora --eval-task beir-cqadupstack=BEIR/cqadupstack. Wang 2022 trains on
"OpenWebtext 1M": give it with --corpus, and its 10k validation set with --set validation_file=PATH.

What cannot be checked, and why:
- STS-Avg (Table 5.9's second column) has no target: Wang 2022 calls it the "weighted average score for STS12, STS13,
  STS14, STS15, STS15, STS16" without saying what weighs it; the project's `sts_avg` is the plain mean of the given
  STS tasks' scores (add --eval-task sts12=... ... sts16=... to log it), a different quantity.
- Figs 5.3/5.4 (R@k and P@k curves) print no numbers; the runs log every k of 1, 3, 5, 10, 100, 1000, and §5.3.3's
  finding on them (Recall@k up, Precision@k down as k grows) is checked as orderings of those cells
  (`sentsweep.experiments.wang_2022.findings`).

    python sweeps/simcse_loss.py --dry-run                        # the protocol card
    python sweeps/simcse_loss.py --quick                          # tiny Quora- and CQADupStack-like folders
    ray submit cluster.yaml sweeps/simcse_loss.py --model bert-base-uncased --corpus openwebtext_1m.txt \\
        --sts-dir data/stsbenchmark --eval-task quora=BEIR/quora --eval-task beir-cqadupstack=BEIR/cqadupstack \\
        --set validation_file=openwebtext_10k.txt --gpus-per-trial 0.5
"""

from __future__ import annotations

import json
from pathlib import Path

from sentsweep.data import read_scored_pairs
from sentsweep.experiments.wang_2022.findings import ORDERINGS
from sentsweep.experiments.wang_2022.published import RETRIEVAL_METRICS, loss_comparison_targets
from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.wang_2022 import SIMCSE_LOSS_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def loss_axes(options):
    return {"method": PROTOCOL.grid("loss_method")}


def baseline_axes(options):
    return {"method": PROTOCOL.grid("baseline_method")}


def demo_beir_folder(test_file: str, data_format: str, folder: Path, min_score: float = 4.0) -> Path:
    """A BEIR folder from the demo STS test pairs: every second sentence a document, the first sentence of each
    pair scored `min_score` or above a query whose relevant document is its pair's second sentence."""
    pairs = read_scored_pairs(test_file, data_format, "test")
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    documents = [json.dumps({"_id": f"d{i}", "title": "", "text": text}) for i, text in enumerate(pairs.sentences2)]
    relevant = [i for i, score in enumerate(pairs.scores) if score >= min_score]
    queries = [json.dumps({"_id": f"q{i}", "text": pairs.sentences1[i]}) for i in relevant]
    (folder / "corpus.jsonl").write_text("\n".join(documents) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" +
                                               "".join(f"q{i}\td{i}\t1\n" for i in relevant))
    return folder


def quick_retrieval_tasks(constants: dict, output_dir: Path) -> dict:
    """--quick: Quora- and CQADupStack-like folders from the demo STS test pairs (CQADupStack: the same folder
    for each of its 12 forums), unless --eval-task gave them."""
    tasks = dict(constants.get("eval_tasks") or {})

    def make(folder: Path) -> Path:
        return demo_beir_folder(constants["test_file"], constants["eval_format"], folder).resolve()

    if "quora" not in tasks:
        tasks["quora"] = str(make(output_dir / "demo-quora"))
    if "beir-cqadupstack" not in tasks:
        # lazy: torch
        from sentsweep.tasks.retrieval import CQADUPSTACK_FORUMS

        for forum in CQADUPSTACK_FORUMS:
            make(output_dir / "demo-cqadupstack" / forum)
        tasks["beir-cqadupstack"] = str((output_dir / "demo-cqadupstack").resolve())
    return {"eval_tasks": tasks}


DEFINITION = SweepDefinition(
    name="simcse_loss",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    protocol=PROTOCOL,
    stages=[Stage("SimCSE losses", loss_axes, grids={"method": "loss_method"}),
            Stage("baselines", baseline_axes, grids={"method": "baseline_method"})],
    quick_setup=quick_retrieval_tasks,
    # the trained rows' STS-B is at the lowest validation loss, the baselines' at their one checkpoint
    table_metrics=["sts_test_at_best_validation_loss", "sts_test_at_best_dev", *RETRIEVAL_METRICS],
    # Wang 2022 Tables 5.9 (STS-B) and 5.10 (R@100 on Quora and CQADupStack), mean of 3 seeds: 3 + 8 cells
    published=tuple(loss_comparison_targets()),
    orderings=ORDERINGS,  # §5.3.3 on Figs. 5.3 and 5.4
)
