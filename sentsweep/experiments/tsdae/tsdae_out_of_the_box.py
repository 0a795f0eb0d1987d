"""TSDAE paper's out-of-the-box supervised models (§6, Tables 2 and 3): SBERT-base-nli-v2 and -nli-stsb-v2 as released.

Each model of Tables 2's and 3's block "Out-of-the-box supervised pre-trained models" that the hub holds (App. B,
Table 8) is scored without any training (the method `frozen_encoder`, its own mean pooling): on each USEB task
given with --eval-task (Table 2's columns), and on the STS benchmark test set (Table 3's STSb column, --sts-dir).
USE-large, a TensorFlow Hub model, is not run.

    python sweeps/tsdae_out_of_the_box.py --dry-run                  # the protocol card
    python sweeps/tsdae_out_of_the_box.py --quick                    # the tiny random BERT in place of the two
    python sweeps/tsdae_out_of_the_box.py --sts-dir data/stsbenchmark --eval-task askubuntu=data-eval/askubuntu \\
        --eval-task scidocs=data-eval/scidocs
"""

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.experiments.tsdae.useb_published import TASK_METRICS
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import OUT_OF_THE_BOX_PROTOCOL
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition

# Table 2, "Out-of-the-box supervised pre-trained models", rows as printed (AskU. CQADup. | TURL PIT Avg. | Cite CC
# CR CV Avg. | Avg.), the four targeted columns kept: AskU., CQADup., TwitterP. Avg., SciDocs Avg.
# "SBERT-base-nli-v2 53.4 11.8 75.4 69.9 72.7 66.8 70.0 70.7 72.8 70.1 52.0"
# "SBERT-base-nli-stsb-v2 54.5 12.9 75.9 68.5 72.2 66.2 69.2 69.9 72.3 69.4 52.3"
# Table 3, the same block (STSb, Specific Tasks): "SBERT-base-nli-v2 83.9 52.0", "SBERT-base-nli-stsb-v2 87.3 52.3";
# the STSb column.
TABLE_2 = {"kwang2049/SBERT-base-nli-v2": (53.4, 11.8, 72.7, 70.1),
           "kwang2049/SBERT-base-nli-stsb-v2": (54.5, 12.9, 72.2, 69.4)}
TABLE_3 = {"kwang2049/SBERT-base-nli-v2": 83.9, "kwang2049/SBERT-base-nli-stsb-v2": 87.3}
BLOCK = "out-of-the-box supervised pre-trained models"


def model_axes(options) -> dict:
    """Every released model (--quick: none, the tiny model stands in)."""
    method = {"method": OUT_OF_THE_BOX_PROTOCOL.grid("method")}
    return method if options.quick else method | {"model": OUT_OF_THE_BOX_PROTOCOL.grid("model")}


def out_of_the_box_targets() -> list[PublishedValue]:
    """Tables 2's and 3's cells of each released model: its USEB task columns (a run with --eval-task) and its STSb
    test score (a released model's score is its own: no seeds to average)."""
    useb = [PublishedValue(params={"model": model}, metric=metric, value=value,
                           source=cited(TSDAE, f"§6, Table 2 ({BLOCK})"))
            for model, values in TABLE_2.items() for metric, value in zip(TASK_METRICS, values, strict=True)]
    stsb = [PublishedValue(params={"model": model}, metric="sts_test_at_best_dev", value=value,
                           source=cited(TSDAE, f"§6.1, Table 3 ({BLOCK}, STSb)"))
            for model, value in TABLE_3.items()]
    return useb + stsb


DEFINITION = SweepDefinition(
    name="tsdae_out_of_the_box",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=OUT_OF_THE_BOX_PROTOCOL,
    stages=[Stage("model", model_axes)],
    table_metrics=["sts_test_at_best_dev", "sts_dev"],
    published=tuple(out_of_the_box_targets()),
)
