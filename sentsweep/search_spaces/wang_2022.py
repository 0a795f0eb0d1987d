"""Wang (2022)'s protocols, every value with its source: the basic setup of every experiment of its chapter 5
(§5.2.2, Table 5.3), the multi-task weight (§5.3.7, Tables 5.16-5.17), the batch size (§5.3.4, Table 5.11) and
SimCSE's loss (§5.3.3, Tables 5.9-5.10).

Multi-task (eq. 3.6): SimCSE + w CLM-AE and SimCSE + w MLM-AE, w in {0.1, 0.01, 0.001, 0.0001}, 3 epochs, with
the baselines of Table 5.16 (SimCSE 1 and 3 epochs, each auto-encoder alone), on Table 5.3's basic setup, seeds
1, 7, 42, checkpoint by validation loss (§5.2.2).
"""

from __future__ import annotations

from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.settings import cited, project_choice

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

# --- §5.3.3, Tables 5.9-5.10: SimCSE's loss ---------------------------------------------------------------------------
SECTION_5_3_3 = cited(THESIS_WANG_2022, "§5.3.3", '"we use contrastive learning method SimCSE [Gao & Yao⁺ 21] as the '
                      'training framework and replace its loss function by BCE and NT-Xent loss respectively"')
BASELINES = cited(THESIS_WANG_2022, "§5.3.3", '"we also include Bert-base-uncased [Devlin & Chang⁺ 19] and BM25 '
                  '[Yang & Fang⁺ 17] as baselines"')
# A baseline trains nothing: it has no validation loss, and its one checkpoint is the one scored.
ONE_CHECKPOINT = Sourced("best_sts_dev", project_choice("Wang 2022's baselines train nothing, so no checkpoint is "
                                                        "selected"))

SIMCSE_LOSS_PROTOCOL = Protocol(
    settings={
        **BASIC_SETUP,
        "epochs": Sourced(1, cited(THESIS_WANG_2022, "§5.3.3, Table 5.3", '"Other hyperparameters setting is same '
                                   'as basic experimental setup from Table 5.3"; "epochs 1"')),
        "method": Sourced("simcse", SECTION_5_3_3),
    },
    seeds=WANG_SEEDS,
    grids={
        "loss_method": Sourced(["simcse", "simcse_bce"], SECTION_5_3_3),
        "baseline_method": Sourced(["frozen_encoder", "bm25"], BASELINES),
    },
    method_settings={
        "frozen_encoder": {"select_checkpoint": ONE_CHECKPOINT},
        "bm25": {"select_checkpoint": ONE_CHECKPOINT, "bm25_variant": Sourced("pyserini", cited(
            THESIS_WANG_2022, "§5.2.1", '"We use `Pyserini` [Lin & Ma⁺ 21] implemented BM25 as baseline"'))},
    },
    quick=dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=10, warmup_steps=5, validation_size=40, seeds=2),
    notes=("Table 5.10 scores Recall@100 on Quora and CQADupStack (BEIR's, averaged over its 12 forums): give "
           "--eval-task quora=... --eval-task beir-cqadupstack=...; Table 5.9's STS-B is the --sts-dir test split.",
           "Wang 2022 validates on a separate 10k set (§5.1): give it with --set validation_file=PATH; without one, "
           "validation_size sentences are held out of the corpus.",
           "The baselines train nothing: their one checkpoint is scored (sts_test_at_best_dev), and their seeds "
           "give one value each.",
           "BM25 tokenises as the project does (`sentsweep.bm25_index`), not with Pyserini's Lucene analyser.",
           "STS-Avg (Table 5.9) is not targeted: Wang 2022's \"weighted average\" names no weights; the project's "
           "sts_avg is a plain mean."),
)
