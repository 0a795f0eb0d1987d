"""Protocols of the contrastive and multi-task experiments: Reiml (2023) §5.4.2 / Table 6.10 and Wang
(2022, "Wang 2022") §5.2.2 / Table 5.3, §5.3.4 / Table 5.11, §5.3.7 / Tables 5.16-5.17.

- Noise Matching (Reiml 2023 §5.4.2): all methods 12.5K steps, batch size 64 ("8 ... made the contrastive learning
  objectives too easy"), lr 3e-5, the §5.1 defaults (10% warm-up, linear decay, weight decay 0.01), MEAN and
  CLS pooling, 3 seeds (Table 6.10), evaluated after each epoch and reported at the best dev Spearman (§5.1);
  TSDAE alone is Table 6.10's "TSDAE (repr.)" at §5.4.1's replication settings. Reiml 2023 gives no weight w: the w
  grid is the project's.
- Multi-task (Wang 2022 §5.3.7, eq. 3.6): SimCSE + w CLM-AE and SimCSE + w MLM-AE, w in {0.1, 0.01, 0.001,
  0.0001}, 3 epochs, with the baselines of Table 5.16 (SimCSE 1 and 3 epochs, each auto-encoder alone), on
  Table 5.3's basic setup, seeds 1, 7, 42, checkpoint by validation loss (§5.2.2).
"""

from __future__ import annotations

from sentsweep.experiments.protocols.tsdae import APP_B_CT
from sentsweep.references import THESIS_REIML_2023, THESIS_WANG_2022
from sentsweep.settings import cited, project_choice
from sentsweep.sweep.config.protocol import Protocol, Sourced, sourced

# --- Reiml (2023) §5.4.2, Table 6.10 ---------------------------------------------------------------------------
REIML_5_1 = cited(THESIS_REIML_2023, "§5.1", '"a warm-up period of 10% of the total training time, followed by a '
                  'linear decay. The AdamW optimizer is used with a weight decay of 0.01"')
REIML_5_4_2 = cited(THESIS_REIML_2023, "§5.4.2", '"all methods use BERT and are trained for 12.5K steps with a batch '
                    'size of 64 and a learning rate of 3e-5"')
REIML_EVALUATION = cited(THESIS_REIML_2023, "§5.1", '"After each epoch, we evaluate our models and take the model '
                         'with the best Spearman or F1 score at the end"')
# Table 6.10's "TSDAE (repr.)" row is the §5.4.1 replication, not one of §5.4.2's combinations.
REIML_5_4_1 = cited(THESIS_REIML_2023, "§5.4.1", '"The authors used 100K training steps with a batch size of 8, the '
                    'AdamW optimizer with a constant learning rate of 3e-5, no warm-up period, and a weight decay of '
                    '0.0"')
TSDAE_REPLICATION = {
    **sourced(REIML_5_4_1, max_steps=100_000, batch_size=8, lr=3e-5, lr_schedule="constant", warmup_ratio=0.0,
              weight_decay=0.0),
    "select_checkpoint": Sourced("last", cited(
        THESIS_REIML_2023, "§5.4.1", '"a replication study of the original TSDAE setup as described in the original '
        'paper"; TSDAE App. B: "we do not use early-stopping with in-domain labeled data and indicate a fixed number '
        'of training steps" (the last checkpoint)')),
}
NM_SETTINGS = {
    **sourced(REIML_5_4_2, max_steps=12_500, batch_size=64, lr=3e-5),
    **sourced(REIML_5_1, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01, optimizer="adamw"),
    **sourced(REIML_EVALUATION, eval_steps=None, select_checkpoint="best_sts_dev"),
    "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
    "pooling": Sourced("cls", cited(THESIS_REIML_2023, "§5.4.2", '"using the MEAN and CLS pooling methods"')),
    "method": Sourced("mlm+nm", cited(THESIS_REIML_2023, "§5.4.2")),
}
# Reiml 2023 §4.2.3 contradicts itself on the side of NM's stop-gradient; the card says which reading runs.
NM_STOP_GRADIENT_NOTE = (
    "NM's stop-gradient: Reiml 2023 §4.2.3 contradicts itself. It puts the \"stop-gradient operator (sg) on the hidden "
    "representation\" h_i of the original sentence x_i, \"allowing only the gradient to flow backwards through the "
    "original sentence\" (the original's side), yet wants \"the model will only learn to be similar to the original "
    "sentence, not the noised one\" (the noised side). Implemented: the stop-gradient on the original, the "
    "gradient flowing through the noised copy only, the reading of the sg on h_i, of the sentence after it and "
    "of \"it should not learn that x is similar to T(x)\".")
NM_GRIDS = {
    "method": Sourced(["simcse", "mlm+simcse", "nm", "tsdae"],
                      cited(THESIS_REIML_2023, "§5.4.2, Table 6.10", "SimCSE, MLM + SimCSE, NM, TSDAE; MLM + NM and "
                            "TSDAE + NM are stage 2's w = 1")),
    "pooling": Sourced(["cls", "mean"], cited(THESIS_REIML_2023, "§5.4.2", '"using the MEAN and CLS pooling methods"')),
    "weighted_method": Sourced(["mlm+nm", "tsdae+nm"], cited(THESIS_REIML_2023, "§5.4.2, Table 6.10")),
    "w": Sourced([1.0, 0.1, 0.01, 0.001], project_choice("Table 6.10 has no w axis: the project's grid")),
}
# The combinations' weight; the methods of one objective have none.
PLAIN_SUM = project_choice("Reiml 2023 gives no weight for its combinations; w = 1 is their plain sum")
NM_PROTOCOL = Protocol(
    settings=NM_SETTINGS,
    method_settings={"tsdae": TSDAE_REPLICATION} | {
        method: {"w": Sourced(1.0, PLAIN_SUM)} for method in ("mlm+simcse", "mlm+nm", "tsdae+nm")},
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Table 6.10", '"Results are averaged over 3 random seeds"')),
    grids=NM_GRIDS,
    quick=dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2),
    notes=("TSDAE alone is Table 6.10's \"TSDAE (repr.)\", the §5.4.1 replication (100K steps, batch 8, constant "
           "3e-5); §5.4.2's shared settings are those of the five methods it lists, which plain TSDAE is not.",
           "Table 6.10 has TSDAE (repr.) in its CLS block only; its mean-pooling trials are the project's extra.",
           "Table 6.10's MLM + NM and TSDAE + NM rows are stage 2's w = 1 rows (no trial runs twice).",
           "MLM runs at Reiml 2023's shared 3e-5 here, on purpose (\"to ensure a fair comparison\", §5.4.2); TSDAE "
           "§5.2 trains MLM alone at 5e-5.",
           "TSDAE keeps its own noise (deletion 0.6, tied decoder) inside these combinations.",
           "Reiml 2023 evaluates Table 6.10 on USEB's tasks by average precision: add them with --eval-task.",
           NM_STOP_GRADIENT_NOTE),
)

# --- Wang (2022) §5.2.2, Table 5.3: the basic setup of every experiment of chapter 5 -----------------------------
TABLE_5_3 = cited(THESIS_WANG_2022, "§5.2.2, Table 5.3")
WANG_EVALUATION = cited(THESIS_WANG_2022, "§5.2.2", '"For the best model checkpoint selection we use validation '
                        'loss ... We evaluate the model checkpoint every 250 steps"')
WANG_SEEDS = Sourced([1, 7, 42], cited(THESIS_WANG_2022, "§5.2.2", '"three different random seeds (1, 7, 42)"'))
BASIC_SETUP = {
    **sourced(TABLE_5_3, batch_size=64, warmup_steps=910, weight_decay=0.0, max_seq_length=32, lr=3e-5, pooling="mean"),
    **sourced(WANG_EVALUATION, eval_steps=250, select_checkpoint="validation_loss"),
    "validation_size": Sourced(10_000, cited(THESIS_WANG_2022, "§5.2.2", '"eBay titles 10k" validates "eBay titles '
                                                                          '100k"; held out of the corpus unless '
                                                                          'validation_file is given')),
    "lr_schedule": Sourced("linear", project_choice("Wang 2022 gives warm-up steps only; its code is SimCSE's "
                                                    "(§5.2.3), whose transformers Trainer decays linearly after the "
                                                    "warm-up")),
    "optimizer": Sourced("adamw", project_choice("Wang 2022 names no optimiser; SimCSE's code uses AdamW")),
}

MULTITASK_PROTOCOL = Protocol(
    settings={
        **BASIC_SETUP,
        "epochs": Sourced(3, cited(THESIS_WANG_2022, "§5.3.7", '"We train the model with 3 epochs"')),
        "method": Sourced("simcse+clm_ae", cited(THESIS_WANG_2022, "§5.3.7, eq. 3.6")),
    },
    seeds=WANG_SEEDS,
    grids={
        "method": Sourced(["simcse+clm_ae", "simcse+mlm_ae"], cited(THESIS_WANG_2022, "§5.3.7, Tables 5.16-5.17")),
        "w": Sourced([0.1, 0.01, 0.001, 0.0001], cited(THESIS_WANG_2022, "§5.3.7", '"different weights w ∈ {0.1, '
                                                                                    '0.01, 0.001, 0.0001}"')),
        "simcse_baseline": Sourced(["simcse"], cited(THESIS_WANG_2022, "Tables 5.16-5.17", "L_simcse")),
        "simcse_epochs": Sourced([1, 3], cited(THESIS_WANG_2022, "Table 5.16", "L^1_simcse (1 epoch) and L_simcse")),
        "autoencoder": Sourced(["clm_ae", "mlm_ae"], cited(THESIS_WANG_2022, "Table 5.16", "L_CLM_autoencoder, "
                                                                                          "L_MLM_autoencoder")),
    },
    quick=dict(lr=1e-3, batch_size=16, epochs=1, eval_steps=10, warmup_steps=5, validation_size=40, seeds=2),
    notes=("Wang 2022 validates on a separate 10k set (§5.1), so its 100k training set stays whole: give it with --set "
           "validation_file=PATH; without one, validation_size sentences are held out of the corpus.",
           "The auto-encoder losses sum over a sentence's tokens and average over sentences (eq. 3.4 / 3.5), so "
           "w weighs a per-sentence reconstruction loss against SimCSE's per-sentence loss.",
           "SimCSE's term and the auto-encoder's share one encoder pass f(x) (eq. 3.6).",
           "Wang 2022 selects Table 5.17's checkpoints by Recall@10 on a Quora dev split; this sweep selects by "
           "validation loss, the thesis' default (§5.2.2). For Table 5.17: --eval-task quora=BEIR/quora --set "
           "select_checkpoint=best_task_dev selection_task=quora selection_metric=recall_at_10.",
           "Wang 2022 evaluates on eProduct (internal) and Quora: add --eval-task quora=... for the retrieval "
           "columns."),
)

BATCH_SIZE_PROTOCOL = Protocol(
    settings={
        **BASIC_SETUP,
        "epochs": Sourced(1, cited(THESIS_WANG_2022, "Table 5.11", '"train one epoch with different batch sizes"')),
        "method": Sourced("simcse", cited(THESIS_WANG_2022, "§5.3.4, Table 5.11")),
    },
    seeds=Sourced([1, 7, 42], cited(THESIS_WANG_2022, "Table 5.11; §5.2.2", '"averaged over 3 random seeds" (1, 7, '
                                                                            '42)')),
    grids={
        "batch_size": Sourced([32, 64, 96, 128, 256, 512], cited(THESIS_WANG_2022, "§5.3.4, Table 5.11")),
        "method": Sourced(["simcse", "consert"], project_choice("Table 5.11 runs SimCSE; ConSERT, Wang 2022's other "
                                                                "contrastive method (§5.3.1), is added")),
    },
    quick=dict(lr=1e-3, max_steps=40, eval_steps=10, warmup_steps=5, validation_size=40, seeds=2),
    notes=("The steps follow the batch size: one epoch of the training sentences at each. Table 5.11's steps "
           "column is one epoch of the whole 100k corpus: give Wang 2022's separate 10k validation set with --set "
           "validation_file=PATH (Wang 2022 §5.1), else validation_size sentences are held out and the epochs shorten "
           "(the card's steps are those that run).",
           "Table 5.3's 910 warm-up steps outlast one epoch of 100k sentences at batch sizes above 110; kept as "
           "the thesis states them.",),
)

# --- The project's own learning-rate sweep ------------------------------------------------------------------------
LEARNING_RATE_PROTOCOL = Protocol(
    settings=NM_SETTINGS | {"method": Sourced("simcse", project_choice())},
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Table 6.10")),
    grids={
        "method": Sourced(["simcse", "nm", "ct", "consert"], project_choice("the contrastive objectives")),
        "lr": Sourced([1e-5, 3e-5, 5e-5, 1e-4], project_choice("around Reiml 2023's 3e-5")),
    },
    method_settings={"ct": sourced(APP_B_CT, optimizer="rmsprop", lr_schedule="ct_segments", pooling="mean")},
    quick=dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2),
    notes=("The other settings are Reiml 2023 §5.4.2's; the lr axis is the initial rate of CT's segmented schedule.",),
)
