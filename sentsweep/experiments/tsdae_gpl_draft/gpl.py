"""GPL: generated queries, mined negatives, cross-encoder margins, MarginMSE; over seeds (sizes: --sample-sizes).

The TSDAE + GPL report draft (GPL section): 3 queries per passage from a T5 query generator, 50
negatives from a dense retriever, a fresh one of them drawn for a query each time it is trained on.
Give the generator with --set generator=PATH_OR_NAME (a local folder works offline); --quick builds a tiny
random T5 instead. Score retrieval with --eval-task quora=BEIR/quora (or any BEIR folder).

    python sweeps/gpl.py --quick
    python sweeps/gpl.py --model msmarco-distilbert --corpus passages.txt --set generator=t5-query-gen \\
        --sts-dir data/stsbenchmark --eval-task beir-fiqa=beir/fiqa --sample-sizes 1000 10000
"""

from pathlib import Path

from sentsweep.models import build_tiny_seq2seq
from sentsweep.references import REPORT_TSDAE_GPL
from sentsweep.search_spaces.tsdae_gpl_draft import GPL_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def tiny_generator(constants: dict, output_dir: Path) -> dict:
    """--quick: a tiny random T5 sharing the tiny model's tokenizer, unless a generator was given."""
    if "generator" in constants:
        return {}
    folder = (output_dir / "tiny-t5").resolve()
    if not (folder / "config.json").is_file():
        build_tiny_seq2seq(folder, constants["model"])
    return {"generator": str(folder)}


def grid_axes(options):
    return {"queries_per_passage": [GPL_PROTOCOL.quick["queries_per_passage"]] if options.quick
            else GPL_PROTOCOL.grid("queries_per_passage")}


DEFINITION = SweepDefinition(
    name="gpl",
    description=__doc__.splitlines()[0],
    reference=REPORT_TSDAE_GPL,
    protocol=GPL_PROTOCOL,
    stages=[Stage("queries per passage", grid_axes)],
    quick_setup=tiny_generator,
    trains_on_gold_pairs=True,
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "teacher_sts_dev", "teacher_sts_test"],
)
