"""TSDAE paper's relevant content words (§7.2, Figs. 4 and 7): the POS tag of each relevant pair's most relevant word.

For each pair labelled relevant (dev; TwitterPara: test), the most relevant word is the one whose removal from
either sentence lowers the model's cosine most (§7.2's formula, sentsweep/word_relevance.py), tagged by TextBlob's
tagger (the extra `pos`; TSDAE used CoreNLP); each trial logs the share of pairs per tag group and the prior
shares (`sentsweep.tasks.pos_tags`). Stages: TSDAE, CT and SimCSE at the main protocol's settings, each trained on
its target task's sentences (§4.1, as tsdae_main), and the released SBERT-base-nli-v2 and -nli-stsb-v2 as they are.
Give each USEB task as --eval-task pos_<task>=data-eval/<task> with its training sentences as --task-corpus
pos_<task>=data-train/<task>/unsupervised/train.txt. The figures print no numbers: the targets are §7.2's findings,
orderings of the cells (`sentsweep.experiments.tsdae.findings`).

    python sweeps/tsdae_pos_tags.py --dry-run                       # the protocol card
    python sweeps/tsdae_pos_tags.py --quick                         # TwitterPara-format pairs made from the demo pairs
    python sweeps/tsdae_pos_tags.py --model bert-base-uncased --sts-dir data/stsbenchmark \\
        --eval-task pos_askubuntu=data-eval/askubuntu \\
        --task-corpus pos_askubuntu=data-train/askubuntu/unsupervised/train.txt
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_scored_pairs
from sentsweep.demo_data import DEMO_DIR
from sentsweep.experiments.tsdae.findings import POS_TAGS_ORDERINGS, POS_TASKS
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import POS_TAGS_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis
from sentsweep.word_relevance import tagger_problem


@dataclass(frozen=True, kw_only=True)
class PosTagsOptions(PerTaskOptions):
    methods: tuple[str, ...] | None = option(
        f"unsupervised methods (default: {' '.join(POS_TAGS_PROTOCOL.grid('method'))})")


def unsupervised_axes(options):
    methods = options.methods or (["tsdae"] if options.quick else POS_TAGS_PROTOCOL.grid("method"))
    return {"method": methods} | task_axis(options, POS_TASKS)


def out_of_the_box_axes(options):
    """The released models, each scored on every target task (--quick: the tiny model stands in)."""
    models = {} if options.quick else {"model": POS_TAGS_PROTOCOL.grid("model")}
    return {"method": POS_TAGS_PROTOCOL.grid("out_of_the_box")} | models | task_axis(options, POS_TASKS)


def missing_pos_inputs(options) -> list[str]:
    """TextBlob, and the USEB tasks' folders but in the demo."""
    missing = [problem] if (problem := tagger_problem()) else []
    given = [spec.partition("=")[0] for spec in options.eval_task]
    if not options.quick and not set(given) & set(POS_TASKS):
        missing.append("--eval-task pos_<task>=FOLDER is required: USEB's data-eval folders (" + ", ".join(
            f"{task}=data-eval/{task.removeprefix('pos_')}" for task in POS_TASKS) + "), whose relevant pairs are "
            "analysed; the demo pairs serve --quick only")
    return missing


def demo_twitterpara(pairs_file: Path, folder: Path) -> str:
    """--quick: a TwitterPara-format folder of the demo STS pairs, each gold score s (0-5) written as round(s)
    annotators' votes out of 5, so that a pair above 3.5 is a paraphrase."""
    pairs = read_scored_pairs(pairs_file)
    rows = [(first, second, round(score)) for first, second, score in
            zip(pairs.sentences1, pairs.sentences2, pairs.scores)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Twitter_URL_Corpus_test.txt").write_text(
        "".join(f"{first}\t{second}\t({votes}, 5)\tdemo\n" for first, second, votes in rows), encoding="utf-8")
    (folder / "test.data").write_text(
        "".join(f"{index}\tdemo\t{first}\t{second}\t({votes}, 5)\n" for index, (first, second, votes)
                in enumerate(rows)), encoding="utf-8")
    return str(folder.resolve())


def quick_pairs(constants: dict, output_dir: Path) -> dict:
    """--quick without --eval-task: the demo pairs as pos_twitterpara."""
    if constants.get("eval_tasks"):
        return {}
    return {"eval_tasks": {"pos_twitterpara": demo_twitterpara(DEMO_DIR / "sts-test.csv",
                                                               output_dir / "demo-twitterpara")}}


DEFINITION = SweepDefinition(
    name="tsdae_pos_tags",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=POS_TAGS_PROTOCOL,
    stages=[Stage("unsupervised", unsupervised_axes),
            Stage("out-of-the-box", out_of_the_box_axes, grids={"method": "out_of_the_box"})],
    options=PosTagsOptions,
    per_task=True,
    data_labels={TASK_AXIS: POS_TASKS},
    missing_inputs=missing_pos_inputs,
    quick_setup=quick_pairs,
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "sts_dev"],
    orderings=POS_TAGS_ORDERINGS,  # §7.2's findings on Figure 4, checked on each data set (App. H's Figure 7)
)
