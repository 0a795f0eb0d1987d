"""TSDAE paper's starting checkpoints (§8, Table 4): TSDAE from BERT-base, from scratch, from BART-base and T5-base.

A run trains TSDAE at the main protocol's settings (§5, App. B), one model per target task on that task's own
sentences, as Table 2 does (give each USEB task with --eval-task and its corpus with --task-corpus), from one row of
Table 4, named by --checkpoint: BERT-base (the checkpoint, Table 2's TSDAE), Scratch (the same architecture with
random weights), BART-base or T5-base (the checkpoint's own encoder pooled as the sentence embedding, its own
pre-trained decoder reconstructing). --model must be the row's hub model (App. B, Table 8), or a local copy of it;
--checkpoint is logged as the param `checkpoint`, and its cells, test score and training loss, are the run's
reproduction targets. The BART-base and T5-base rows keep no model (--keep-models none).

    python sweeps/tsdae_initialisation.py --dry-run --checkpoint Scratch            # the protocol card
    python sweeps/tsdae_initialisation.py --quick --checkpoint BART-base --keep-models none   # a tiny random BART
    python sweeps/tsdae_initialisation.py --checkpoint T5-base --model t5-base --keep-models none \\
        --corpus data-train/askubuntu/unsupervised/train.txt --sts-dir data/stsbenchmark \\
        --eval-task askubuntu=data-eval/askubuntu --task-corpus askubuntu=data-train/askubuntu/unsupervised/train.txt
"""

from dataclasses import dataclass, replace
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.errors import InputError
from sentsweep.experiments.tsdae.useb_published import SEEDS, TASK_METRICS, USEB_TASKS
from sentsweep.models import build_tiny_encoder_decoder, is_encoder_decoder_folder
from sentsweep.references import TSDAE
from sentsweep.search_spaces.protocol import Sourced
from sentsweep.search_spaces.tsdae import MAIN_PROTOCOL
from sentsweep.settings import cited, project_choice
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis

# Table 4's rows and the hub model each starts from: App. B, Table 8 ("Model checkpoints used in this work") for
# BERT-base, BART-base and T5-base; Scratch is BERT-base's architecture with random weights (the project's reading:
# the paper names no architecture for it, and every other TSDAE model of the paper is a BERT-base).
CHECKPOINTS = {"BERT-base": "bert-base-uncased", "Scratch": "bert-base-uncased", "BART-base": "facebook/bart-base",
               "T5-base": "t5-base"}
ENCODER_DECODERS = ("BART-base", "T5-base")
DISCUSSION = ('"we also further train BART-base and T5-base models with TSDAE on the 4 domain-specific datasets"; '
              '"Compared with training from scratch"')
PRE_TRAINED = Sourced(["checkpoint"], cited(TSDAE, "§8, Table 4 (BERT-base)", '"The results for BERT-base are copied '
                                         'from Table 2"'))
SCRATCH = Sourced(["random"], cited(TSDAE, "§8, Table 4 (Scratch)", '"Compared with training from scratch (which '
                                    'is similar to Zhang et al. (2018))"; BERT-base\'s architecture (project choice: '
                                    'the paper names none)'))
OWN_DECODER = Sourced([False], project_choice(
    'TSDAE §8 trains "BART-base and T5-base models with TSDAE": the checkpoint\'s own pre-trained decoder '
    "reconstructs, so no decoder is tied to the encoder (they share the word embeddings, as pre-trained)"))
# Each row's stage: the setting it gives its trials, as a one-value axis, and the protocol grid that cites it.
ROW_SETTINGS = {"BERT-base": ("initialisation", "pre_trained"), "Scratch": ("initialisation", "scratch"),
                "BART-base": ("tie_decoder", "own_decoder"), "T5-base": ("tie_decoder", "own_decoder")}

# §8, Table 4 ("Test performance/training loss of TSDAE models starting from different checkpoints. The results for
# BERT-base are copied from Table 2."), rows as printed (AskU. CQADup. TwitterP. SciDocs Avg., each "test/loss"),
# the four task columns kept as (test score, training loss); the Avg. column is not targeted.
# "BERT-base 59.4/2.2 14.5/3.4 73.0/2.4 74.0/2.8 55.2/2.7"
# "Scratch 56.6/2.6 8.4/4.2 69.8/3.3 67.2/3.5 50.5/3.4"
# "BART-base 58.5/1.4 9.5/2.0 60.3/1.5 62.0/1.7 47.6/1.7"
# "T5-base 45.6/1.0 2.2/1.4 48.2/1.5 30.8/1.1 31.7/1.3"
TABLE_4 = {
    "BERT-base": ((59.4, 2.2), (14.5, 3.4), (73.0, 2.4), (74.0, 2.8)),
    "Scratch": ((56.6, 2.6), (8.4, 4.2), (69.8, 3.3), (67.2, 3.5)),
    "BART-base": ((58.5, 1.4), (9.5, 2.0), (60.3, 1.5), (62.0, 1.7)),
    "T5-base": ((45.6, 1.0), (2.2, 1.4), (48.2, 1.5), (30.8, 1.1)),
}
COLUMNS = ("AskU.", "CQADup.", "TwitterP.", "SciDocs")
LOSS_NOTE = ("the training loss as train_loss: the mean over the last evaluation interval's steps (Table 4 does not "
             "say over which steps its loss is taken)")

PROTOCOL = replace(
    MAIN_PROTOCOL,
    grids={"pre_trained": PRE_TRAINED, "scratch": SCRATCH, "own_decoder": OWN_DECODER},
    method_settings={},
    notes=("--checkpoint names Table 4's row the run re-runs and --model its hub model (App. B, Table 8): "
           + "; ".join(f"{label} {model}" for label, model in CHECKPOINTS.items())
           + ". Scratch draws BERT-base's weights anew for each seed, the decoder's with them; BART-base and T5-base "
           "pool their own encoder ([CLS] pooling: the first token's vector, as TSDAE's, §3) and decode with their "
           "own pre-trained decoder.",
           "Table 4 reports USEB's four tasks as Table 2 does (average precision), each column a model trained on "
           "that task's own sentences (§4.1): give each task with --eval-task NAME=PATH and its training sentences "
           "with --task-corpus NAME=PATH; the training loss of a cell is its runs' train_loss.",
           "--quick with --checkpoint BART-base or T5-base trains a tiny random BART or T5 (the tiny BERT's "
           "vocabulary) in place of the tiny BERT. Those rows keep no model: they need --keep-models none (a "
           "sentence model made of BART's or T5's encoder is no model sentence-transformers reloads as trained)."),
)


@dataclass(frozen=True, kw_only=True)
class TsdaeInitialisationOptions(PerTaskOptions):
    checkpoint: str = option("Table 4's row the run re-runs (logged as the param `checkpoint`; the targets of its "
                             "row are checked)", "BERT-base", choices=tuple(CHECKPOINTS))


def checkpoint_label(options: TsdaeInitialisationOptions) -> dict:
    return {"checkpoint": options.checkpoint}


def check_model(options: TsdaeInitialisationOptions, constants: dict) -> None:
    """--model must be the row's hub model, or a local folder of its kind (an encoder-decoder for BART-base and
    T5-base, none for the others); --keep-models is refused for the encoder-decoder rows."""
    model, row = options.model, options.checkpoint
    folder = Path(model).expanduser() if model else None
    if folder is not None and (folder / "config.json").is_file():
        is_pair = is_encoder_decoder_folder(model)
        if is_pair != (row in ENCODER_DECODERS):
            raise InputError(f"--model {model!r} is {'an' if is_pair else 'no'} encoder-decoder, but --checkpoint "
                             f"{row}'s model {CHECKPOINTS[row]!r} is {'one' if row in ENCODER_DECODERS else 'not'}")
    elif model and not (folder and folder.exists()) and model != CHECKPOINTS[row]:
        raise InputError(f"--model {model!r} is not --checkpoint {row}'s model {CHECKPOINTS[row]!r} "
                         f"(TSDAE App. B, Table 8)")
    if options.keep_models != "none" and row in ENCODER_DECODERS:
        raise InputError(f"--checkpoint {row} keeps no model: give --keep-models none (its sentence model, the "
                         "checkpoint's encoder, is not one sentence-transformers reloads as trained)")


def tiny_row_model(constants: dict, output_dir: Path) -> dict:
    """--quick: for BART-base and T5-base, a tiny random BART or T5 with the tiny BERT's vocabulary in place of the
    tiny BERT (a model given with --model is kept)."""
    # lazy: ray, torch
    from sentsweep.sweep.launch.launcher import tiny_model_folder

    row = constants["checkpoint"]
    if row not in ENCODER_DECODERS or constants["model"] != str(tiny_model_folder(output_dir)):
        return {}
    kind = "bart" if row == "BART-base" else "t5"
    folder = (output_dir / f"tiny-{kind}").resolve()
    if not (folder / "config.json").is_file():
        build_tiny_encoder_decoder(folder, constants["model"], kind)
    return {"model": str(folder)}


def row_stage(row: str) -> Stage:
    """The stage of Table 4's `row`: TSDAE from the row's starting point, on each target task; left out unless
    --checkpoint names the row."""
    setting, grid = ROW_SETTINGS[row]

    def axes(options: TsdaeInitialisationOptions) -> dict | None:
        if options.checkpoint != row:
            return None
        return {setting: PROTOCOL.grid(grid)} | task_axis(options, USEB_TASKS)

    return Stage(row, axes, grids={setting: grid})


def table_4_targets() -> list[PublishedValue]:
    """Table 4's cells: each row and task, its test score and its training loss, the mean of 5 seeds (Table 2's
    "Results are averaged over 5 random seeds", whose BERT-base row Table 4 copies)."""
    return [PublishedValue(params={"checkpoint": row, TASK_AXIS: task}, metric=metric, value=value, runs=SEEDS,
                           setting={"model": CHECKPOINTS[row]}, note=note,
                           source=cited(TSDAE, f"§8, Table 4 ({row}, {column}{where})"))
            for row, cells in TABLE_4.items()
            for task, metric, column, (score, loss) in zip(USEB_TASKS, TASK_METRICS, COLUMNS, cells, strict=True)
            for metric, value, where, note in ((metric, score, ", test performance", ""),
                                               ("train_loss", loss, ", training loss", LOSS_NOTE))]


DEFINITION = SweepDefinition(
    name="tsdae_initialisation",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=PROTOCOL,
    stages=[row_stage(row) for row in CHECKPOINTS],
    options=TsdaeInitialisationOptions,
    per_task=True,
    settings_from_options=checkpoint_label,
    check=check_model,
    quick_setup=tiny_row_model,
    data_labels={TASK_AXIS: USEB_TASKS, "checkpoint": tuple(CHECKPOINTS)},
    table_metrics=["sts_test_last", "train_loss", "sts_dev"],
    published=tuple(table_4_targets()),
)
