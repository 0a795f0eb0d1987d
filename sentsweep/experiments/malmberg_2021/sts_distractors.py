"""STS-B with distractors (Malmberg (2021) Figs. 4.1-4.3): Table 3.2's SBERT and TF-IDF models on the 15 pool files.

Each STS-B pair's partner sentence is retrieved among itself and 5 synthetic sentences, whose words a masked LM
replaced by its 100th-ranked token (§3.2.1): `sentsweep build-distractors` writes the pools, one file per bucket of
pairs (all, gold score >= 3, <= 3: Figs. 4.1, 4.2, 4.3) and number of changed words (1-5, each figure's x axis).
--pools-dir names the folder of one split (`<output>/test`); each file is scored as the evaluation task
`distractors_<bucket>_<k>` (top-1 accuracy, `distractors_all_3_top1`), a column of the sweep's table.

Stages (Table 3.2's rows):
- "TF-IDF": lemmatised, the full vocabulary and the top 1024 terms (§3.3.3), its IDF from --corpus (Malmberg 2021
  builds the vocabulary on the train set of the data set: give STS-B's train sentences).
- "SBERT on STS-B": `sbert` on the STS benchmark's train pairs (beside --sts-dir) with "SBERT params" (§3.4.1), at
  dropout 0.1 and 0.3.
The figures print no numbers: the sweep's targets are §5.2's findings in words, orderings of its cells
(`sentsweep.experiments.malmberg_2021.findings`), checked under its tables.

    python sweeps/sts_distractors.py --dry-run                    # the protocol card
    python sweeps/sts_distractors.py --quick                      # pools made from the demo pairs, no masked LM
    sentsweep build-distractors --model bert-large-uncased --sts-dir data/stsbenchmark --output-dir pools
    python sweeps/sts_distractors.py --model bert-large-uncased --sts-dir data/stsbenchmark \\
        --corpus stsb_train_sentences.txt --pools-dir pools/test
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

from sentsweep.data import read_scored_pairs
from sentsweep.demo_data import DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.experiments.malmberg_2021.findings import ORDERINGS
from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.search_spaces.malmberg_2021 import SQUAD_SENTENCE_RETRIEVAL_PROTOCOL as SQUAD_PROTOCOL
from sentsweep.search_spaces.protocol import Sourced
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option

BUCKETS = ("all", "ge3", "le3")  # Figs. 4.1, 4.2, 4.3 (`sentsweep build-distractors`' file names at threshold 3)
CHANGED = (1, 2, 3, 4, 5)  # words changed per synthetic sentence (§3.4.4: "ranging from 1 to 5")
POOL_TASKS = {f"distractors_{bucket}_{k}": f"{bucket}_{k}.jsonl" for bucket in BUCKETS for k in CHANGED}
METRICS = [f"{task}_top1" for task in POOL_TASKS]
NEGATIVES = 5  # §3.2.1: "the original sentence pair, as well as 5 synthetically created sentences"

PROTOCOL = replace(
    SQUAD_PROTOCOL,
    grids={"lexical_method": Sourced(["tfidf"], cited(THESIS_MALMBERG_2021, "Table 3.2", "TF-IDF")),
           "fine_tuned_method": Sourced(["sbert"], cited(THESIS_MALMBERG_2021, "Table 3.2", "SBERT, STS-B")),
           "max_features": SQUAD_PROTOCOL.grids["max_features"],
           "dropout": Sourced([0.1, 0.3], cited(THESIS_MALMBERG_2021, "Table 3.2", "SBERT, Mean, STS-B at dropout 0.1 "
                                                "and 0.3"))},
    notes=("The pools are §3.4.4's: \"one dataset containing the entire STS-B dataset, one dataset containing "
           "sentences with a semantic similarity greater or equal to 3, and one dataset containing sentences with a "
           "semantic similarity less or equal to 3\", each with 1 to 5 words changed (`sentsweep build-distractors`; "
           "Malmberg 2021 names no split: give the folder of one with --pools-dir).",
           "Malmberg 2021 §3.3.2 calls SBERT's pooling \"the default mode of 'mean-pooling'\" (sentence-transformers' "
           "mean keeps [CLS] and [SEP]) while §2.8 excludes them; the sweep follows §2.8.",
           "Figs. 4.1-4.3 print no numbers: the targets are §5.2's findings, compared by eye there, as orderings of "
           "the cells (the card's 'Findings checked as orderings'); SBERT at 0.1 \"on par with\" TF-IDF on pairs "
           ">= 3 is a tie, not checked."),
)


@dataclass(frozen=True, kw_only=True)
class StsDistractorsOptions(SweepOptions):
    pools_dir: str | None = option("the pool files of one split written by `sentsweep build-distractors` "
                                   "(<output>/test: all_1.jsonl ... le3_5.jsonl); required but with --quick "
                                   "(default there: pools made from the demo pairs)")


def pool_tasks(options: StsDistractorsOptions) -> dict:
    """{"eval_tasks": {distractors_<bucket>_<k>: file}} of --pools-dir, every file read and checked now."""
    if not options.pools_dir:
        return {}
    # lazy: torch
    from sentsweep.tasks import build_tasks

    folder = Path(options.pools_dir).expanduser()
    missing = [name for name in POOL_TASKS.values() if not (folder / name).is_file()]
    if missing:
        raise InputError(f"--pools-dir {options.pools_dir}: no {', '.join(missing)} (write them with sentsweep "
                         "build-distractors)")
    specs = {task: str((folder / name).resolve()) for task, name in POOL_TASKS.items()}
    build_tasks(specs)
    return {"eval_tasks": specs}


def check_pools(options: StsDistractorsOptions, constants: dict) -> None:
    """--pools-dir gives the evaluation tasks: --eval-task is not taken beside it."""
    if options.eval_task and options.pools_dir:
        raise InputError("--eval-task: sts_distractors scores the 15 pool files of --pools-dir alone")


def missing_pools(options: StsDistractorsOptions) -> list[str]:
    return [] if options.quick or options.pools_dir else [
        "--pools-dir is required: the pool files of `sentsweep build-distractors` (Figs. 4.1-4.3's data)"]


def demo_pools(pairs_file: Path, output_dir: Path, seed: int = 0) -> dict[str, str]:
    """--quick: the 15 pool files from the demo STS pairs without a masked LM: each pair's second sentence among
    `NEGATIVES` other pairs' second sentences (the same pools in every file)."""
    pairs = read_scored_pairs(pairs_file)
    rng = random.Random(seed)
    lines = []
    for index, (query, positive) in enumerate(zip(pairs.sentences1, pairs.sentences2)):
        others = [sentence for other, sentence in enumerate(pairs.sentences2) if other != index]
        candidates = rng.sample(others, NEGATIVES)
        place = rng.randrange(NEGATIVES + 1)
        candidates.insert(place, positive)
        lines.append(json.dumps({"query": query, "candidates": candidates, "positive": place}))
    output_dir.mkdir(parents=True, exist_ok=True)
    for name in POOL_TASKS.values():
        (output_dir / name).write_text("\n".join(lines) + "\n")
    return {task: str((output_dir / name).resolve()) for task, name in POOL_TASKS.items()}


def quick_pools(constants: dict, output_dir: Path) -> dict:
    """--quick without --pools-dir: the demo pools."""
    if constants.get("eval_tasks"):
        return {}
    return {"eval_tasks": demo_pools(DEMO_DIR / "sts-test.csv", output_dir / "demo-pools")}


def tfidf_axes(options):
    return {"method": PROTOCOL.grid("lexical_method"), "max_features": PROTOCOL.grid("max_features")}


def sbert_axes(options):
    return {"method": PROTOCOL.grid("fine_tuned_method"), "dropout": PROTOCOL.grid("dropout")}


DEFINITION = SweepDefinition(
    name="sts_distractors",
    description=__doc__.splitlines()[0],
    reference=THESIS_MALMBERG_2021,
    protocol=PROTOCOL,
    stages=[Stage("TF-IDF", tfidf_axes, grids={"method": "lexical_method"}),
            Stage("SBERT on STS-B", sbert_axes, grids={"method": "fine_tuned_method"})],
    options=StsDistractorsOptions,
    trains_on_gold_pairs=True,
    settings_from_options=pool_tasks,
    check=check_pools,
    missing_inputs=missing_pools,
    quick_setup=quick_pools,
    selection_metric="best_sts_dev",
    table_metrics=METRICS,
    orderings=ORDERINGS,
)
