"""Reiml (2023)'s protocols, every value with its source: the fine-tuning defaults (§5.1), Augmented SBERT
(§5.5, Tables 6.12-6.13), Noise Matching (§5.4.2, Table 6.10), the domain MLM before Augmented SBERT (§4.3.1,
§5.4.3, Table 6.10), the bi-encoder against its cross-encoder teachers (§5.2.1, Tables 6.1-6.3), distillation into
bi-encoders (§5.2.2, Tables 6.4-6.8) and topic-sensitive embeddings (§5.6.1, Tables 6.14-6.17).

- Noise Matching: all methods 12.5K steps, batch size 64 ("8 ... made the contrastive learning objectives too
  easy"), lr 3e-5, the §5.1 defaults (10% warm-up, linear decay, weight decay 0.01), MEAN and CLS pooling,
  3 seeds (Table 6.10), evaluated after each epoch and reported at the best dev Spearman (§5.1); TSDAE alone is
  Table 6.10's "TSDAE (repr.)" at §5.4.1's replication settings. Reiml 2023 gives no weight w: the w grid is the
  project's.
- The domain chain: MLM on the target domain, then a Cross-Bi-Encoder teacher and the Augmented SBERT student
  both started from the MLM checkpoint.
"""

from __future__ import annotations

import math

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.search_spaces.shared import CHAIN_NOTE, QUICK, QUICK_CHAIN
from sentsweep.settings import cited, project_choice

# --- §5.1: the fine-tuning defaults ---------------------------------------------------------------------------
REIML_5_1 = cited(THESIS_REIML_2023, "§5.1", '"we set our learning rate to 2e-5 and include a warm-up period of 10% of '
                  'the total training time, followed by a linear decay. The AdamW optimizer is used with a weight '
                  'decay of 0.01, and our batch size is set to 16"')
FINE_TUNING = sourced(REIML_5_1, lr=2e-5, batch_size=16, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01,
                      optimizer="adamw")
REIML_SELECTION = cited(THESIS_REIML_2023, "§5.1", '"After each epoch, we evaluate our models and take the model with '
                        'the best Spearman or F1 score at the end"')
# Reiml 2023's Augmented SBERT student (a bi-encoder, scored by the cosine of its embeddings).
STUDENT_LOSS = Sourced("cosine", cited(THESIS_REIML_2023, "§2.1.2.4", '"The student model aims to minimize the MSE '
                                                                     'loss functions between the predicted outputs"; '
                                                                     "the cosine's MSE (CosineSimilarityLoss)"))
PROJECT_LENGTH = {
    "max_steps": Sourced(2_000, project_choice("Reiml 2023 trains by epochs of its gold sets; a fixed budget compares "
                                               "samplings at equal cost")),
    "eval_steps": Sourced(200, project_choice()),
    "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
}

# --- §5.5, Tables 6.12-6.13: Augmented SBERT ------------------------------------------------------------------
AUGSBERT_PROTOCOL = Protocol(
    settings={
        **FINE_TUNING, **PROJECT_LENGTH,
        "method": Sourced("augsbert", cited(THESIS_REIML_2023, "§5.5")),
        "setting": Sourced("semi", cited(THESIS_REIML_2023, "§5.5, Tables 6.12-6.13", "AugSBERT semi")),
        "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' default, "
                                                  "mean")),
        "teacher_epochs": Sourced(5, cited(THESIS_REIML_2023, "§5.4.3", '"fine-tune our Cross-Bi-Encoder on the STS-B '
                                                                         'dataset for 5 epochs" (domain adaptation; '
                                                                         "§5.5 gives no number)")),
        "teacher_lr": Sourced(2e-5, REIML_5_1),
        "select_checkpoint": Sourced("best_sts_dev", REIML_SELECTION),
        "loss": STUDENT_LOSS,
        "top_k": Sourced(3, project_choice()),
    },
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Tables 6.12-6.13", '"Results are averaged over 3 random seeds"')),
    grids={
        "teacher": Sourced(["ce", "cbe"], cited(THESIS_REIML_2023, "Tables 6.12-6.13", "CE and CBE")),
        "sampling": Sourced(["none", "random", "kde", "bm25", "semantic"],
                            cited(THESIS_REIML_2023, "§5.5, Tables 6.12-6.13", "rows None, R.S., KDE, BM25, S.S.")),
    },
    quick=QUICK | dict(teacher_epochs=3, teacher_lr=3e-3, top_k=2, domain_mlm_steps=10, domain_mlm_batch_size=8),
    notes=("Semantic search (sampling semantic, and the iterative KDE's semantic + random candidates, Reiml 2023 §6.2) "
           "embeds with `model` as released unless --set retriever=FOLDER names a fine-tuned bi-encoder, which "
           "Reiml 2023 Figure 6.3 finds best.",
           "Each trial reports its teacher's dev/test Spearman, test Pearson and the teacher-student Spearman on "
           "the test pairs (Tables 6.1-6.3), and its silver scores for density plots (Figures 6.3-6.5)."),
)

# --- Reiml (2023) §5.4.2, Table 6.10 ---------------------------------------------------------------------------
REIML_5_1_SCHEDULE = cited(THESIS_REIML_2023, "§5.1", '"a warm-up period of 10% of the total training time, '
                           'followed by a linear decay. The AdamW optimizer is used with a weight decay of 0.01"')
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
    **sourced(REIML_5_1_SCHEDULE, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01, optimizer="adamw"),
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

# --- §4.3.1, §5.4.3, Table 6.10: the domain MLM, then Augmented SBERT --------------------------------------
# Reiml 2023 §4.3.1 and Table 6.10 (FullDomainSBERT): MLM on the target domain, then a Cross-Bi-Encoder teacher and the
# Augmented SBERT student both started from the MLM checkpoint.
REIML_DOMAIN_MLM = cited(THESIS_REIML_2023, "§4.3.1, §5.4.3", '"we first perform 12.5K steps of MLM pretraining '
                         'with a batch size of 64 and a learning rate of 3e-5"')
# Reiml 2023 §5.1's defaults, which its MLM step (§5.4.3) does not override: the schedule and the weight decay.
REIML_5_1_DEFAULTS = cited(THESIS_REIML_2023, "§5.1", '"include a warm-up period of 10% of the total training time, '
                           'followed by a linear decay. The AdamW optimizer is used with a weight decay of 0.01, and '
                           'our batch size is set to 16, unless otherwise specified"; §5.4.3 specifies the steps, '
                           'batch size and rate only')
DOMAIN_CHAIN_PROTOCOL = Protocol(
    settings={"max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
              "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' "
                                                        "default"))},
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Table 6.10", '"averaged over 3 random seeds"')),
    grids={
        "method": Sourced(["mlm"], REIML_DOMAIN_MLM),
        "supervised": Sourced(["augsbert"], cited(THESIS_REIML_2023, "Table 6.10", "FullDomainSBERT")),
        # the ablation's other two bi-encoders (§5.4.3), each one trial of augsbert from the model as released
        "domain_sbert": Sourced(["domain"], cited(
            THESIS_REIML_2023, "§5.4.3", 'DomainSBERT, "one starting from the original RoBERTa checkpoint": the '
            "teacher after Reiml 2023's pair MLM (setting domain), the bi-encoder from the model as released")),
        "domain_sbert_student": Sourced(["model"], cited(
            THESIS_REIML_2023, "§5.4.3", '"one starting from the original RoBERTa checkpoint (DomainSBERT)"')),
        "aug_sbert": Sourced(["unsupervised"], cited(
            THESIS_REIML_2023, "§5.4.3", 'AugSBERT, "one with a Cross-Bi-Encoder that omits the MLM objective"')),
        "aug_sbert_frozen": Sourced([False], cited(
            THESIS_REIML_2023, "§5.4.3", 'embeddings frozen only "After MLM pre-training", which AugSBERT omits')),
    },
    method_settings={
        "mlm": {**sourced(REIML_DOMAIN_MLM, max_steps=12_500, batch_size=64, lr=3e-5),
                **sourced(REIML_5_1_DEFAULTS, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01),
                **sourced(project_choice("Reiml 2023 gives no evaluation schedule for its MLM step; dev is scored to "
                                         "follow it"), eval_steps=2_500, select_checkpoint="last")},
        "augsbert": {**FINE_TUNING,
                     "setting": Sourced("unsupervised", cited(THESIS_REIML_2023, "§4.3.1", "silver pairs of the "
                                                                                         "target domain")),
                     "teacher": Sourced("cbe", cited(THESIS_REIML_2023, "§4.3.1", "the Cross-Bi-Encoder teacher")),
                     "freeze_teacher_embeddings": Sourced(True, cited(
                         THESIS_REIML_2023, "§5.4.3", '"After MLM pre-training, we freeze the embedding weights and '
                                                      'fine-tune our Cross-Bi-Encoder"')),
                     "teacher_epochs": Sourced(5, cited(THESIS_REIML_2023, "§5.4.3", '"fine-tune our Cross-Bi-Encoder '
                                                                                     'on the STS-B dataset for 5 '
                                                                                     'epochs"')),
                     **sourced(cited(THESIS_REIML_2023, "§5.4.3", '"fine-tune our Bi-Encoder for an additional '
                                                                  '12.5K steps, with a batch size of 64"'),
                               max_steps=12_500, batch_size=64),
                     "loss": STUDENT_LOSS,
                     "eval_steps": Sourced(1_250, project_choice())},
    },
    quick=QUICK_CHAIN | dict(teacher_epochs=1, teacher_lr=3e-3, top_k=2),
    notes=(CHAIN_NOTE,
           "Reiml 2023's domain MLM trains on sampled sentence pairs in the format [CLS] x1 [SEP] [CLS] x2 [SEP]; here "
           "it trains on the target corpus's sentences, one per example (the augsbert method's setting 'domain' runs "
           "Reiml 2023's own pair MLM inside one trial).",
           "Reiml 2023 does not state the MLM masking ratio: BERT's 15%.",
           "The ablation's DomainSBERT and AugSBERT (§5.4.3, Table 6.10) are stages of their own, from the model as "
           "released: DomainSBERT's teacher runs Reiml 2023's own MLM on the sampled sentence pairs inside its trial "
           "(augsbert's setting 'domain', the bi-encoder from the model as released); AugSBERT's omits the MLM and "
           "keeps its embeddings trainable (Reiml 2023 freezes them only after MLM)."),
)

# --- §5.2.1, Tables 6.1-6.3: bi-encoder, cross-encoder and Cross-Bi-Encoder -------------------------------------------
THREE_EPOCHS = cited(THESIS_REIML_2023, "§5.2.1", '"Both models are fine-tuned for three epochs on the STS-B train '
                     'split"')
CROSS_BI_ENCODER_PROTOCOL = Protocol(
    settings={
        **FINE_TUNING,
        "method": Sourced("augsbert", cited(THESIS_REIML_2023, "§5.2.1", "the bi-encoder beside its CE / CBE "
                                                                          "teacher, both trained on the gold pairs")),
        "setting": Sourced("semi", cited(THESIS_REIML_2023, "§5.2.1, §6.1.1", '"after finetuning on the STS-B train '
                                                                                'split"')),
        "sampling": Sourced("none", cited(THESIS_REIML_2023, "§5.2.1", "no silver pairs: the basic experiments train "
                                                                       "on the STS-B train split only")),
        "reannotate_gold": Sourced(False, cited(THESIS_REIML_2023, "Table 6.1", '"Spearman correlation of '
                                                "Bi-Encoder and normal Cross-Encoder on STS-B\"; the bi-encoder "
                                                "learns the gold labels (re-annotation is §5.2.2's distillation)")),
        "epochs": Sourced(3, THREE_EPOCHS),
        "max_steps": Sourced(None, THREE_EPOCHS),
        "teacher_epochs": Sourced(3, THREE_EPOCHS),
        "teacher_lr": Sourced(2e-5, REIML_5_1),
        "eval_steps": Sourced(None, REIML_SELECTION),
        "select_checkpoint": Sourced("best_sts_dev", REIML_SELECTION),
        "teacher_activation": Sourced("sigmoid", cited(THESIS_REIML_2023, "§4.1.2", '"a similarity score  $s \\in '
                                                       '(0, 1)$  due to its sigmoid activation function"')),
        "loss": STUDENT_LOSS,
        "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' default, "
                                                  "mean")),
        "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
    },
    seeds=Sourced(3, project_choice("Tables 6.1-6.3 give mean ± std but not how many seeds; Tables 6.12-6.13 "
                                    "average 3")),
    grids={
        "teacher": Sourced(["ce", "cbe"], cited(THESIS_REIML_2023, "Table 6.3", "rows Cross-Encoder and "
                                                                                "Cross-Bi-Encoder")),
        "teacher_activation": Sourced(["none", "tanh"], cited(THESIS_REIML_2023, "Table 6.2",
                                                              '"Cross-Encoder No Activation"; "Cross-Encoder Tanh"')),
    },
    quick=QUICK | dict(epochs=None, teacher_epochs=2, teacher_lr=3e-3),
    notes=("Table 6.3's RoBERTa rows: run again with --model roberta-base (the targets are the BERT rows).",
           "Figure 6.1 (the activations' score densities) is not drawn."),
)

# --- §5.2.2, Tables 6.4-6.8: distillation into bi-encoders ------------------------------------------------------------
DISTILLATION_DATASETS = ("sts-b", "bws", "sts-b-to-bws")
DISTILLATION_SETUP = "§5.2.2"
DISTILLATION_EPOCHS = {"sts-b": 3, "bws": 5, "sts-b-to-bws": 5}
DISTILLATION_EPOCHS_BY_DATASET = cited(THESIS_REIML_2023, DISTILLATION_SETUP, 'by --dataset: sts-b three ("All models '
                                       'are trained for three epochs"), bws five ("The models are trained for five '
                                       'epochs each"), sts-b-to-bws five ("All models are trained for five epochs")')
DISTILLATION_PROTOCOL = Protocol(
    settings={
        **FINE_TUNING,
        "epochs": Sourced(3, DISTILLATION_EPOCHS_BY_DATASET),
        "teacher_epochs": Sourced(3, DISTILLATION_EPOCHS_BY_DATASET),
        "max_steps": Sourced(None, DISTILLATION_EPOCHS_BY_DATASET),
        "eval_steps": Sourced(None, REIML_SELECTION),
        "select_checkpoint": Sourced("best_sts_dev", REIML_SELECTION),
        "loss": STUDENT_LOSS,
        "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' default, "
                                                  "mean")),
        "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
        "setting": Sourced("semi", cited(THESIS_REIML_2023, DISTILLATION_SETUP, '"training a Cross-Encoder and '
                                         'Cross-Bi-Encoder model, and then using their predictions to re-annotate the '
                                         'STS-B train split"')),
        "sampling": Sourced("none", cited(THESIS_REIML_2023, DISTILLATION_SETUP, "the training pairs re-annotated, no "
                                          "silver pairs sampled")),
        "reannotate_gold": Sourced(True, cited(THESIS_REIML_2023, DISTILLATION_SETUP, '"The re-annotated datasets are '
                                               'distilled into Bi-Encoders"')),
        "teacher_lr": Sourced(2e-5, cited(THESIS_REIML_2023, "§5.2", '"All experiments use the hyperparameters '
                                                                      'specified in the previous section"')),
    },
    seeds=Sourced(3, project_choice("Tables 6.4-6.8 give mean ± std but not how many seeds; Tables 6.12-6.13 average "
                                    "3")),
    grids={
        "base_method": Sourced(["sbert"], cited(THESIS_REIML_2023, "§5.2.2, Tables 6.4-6.8", '"Base": "A baseline '
                                                                                     'Bi-Encoder is also trained"')),
        "distill_method": Sourced(["augsbert"], cited(THESIS_REIML_2023, "Tables 6.4-6.8", '"Distill CBE", "Distill '
                                                                                          'CE"')),
        "teacher": Sourced(["cbe", "ce"], cited(THESIS_REIML_2023, "Tables 6.4-6.8", "Distill CBE, Distill CE")),
    },
    quick=QUICK | dict(epochs=None, teacher_epochs=1, teacher_lr=3e-3),
    notes=("--dataset sets the epochs (sts-b three, bws and sts-b-to-bws five: §5.2.2) and, for sts-b-to-bws, the "
           "teacher's pairs (--teacher-train-file, STS-B train) and the pairs it re-annotates (the BWS train split "
           "of --sts-dir).",
           "The BWS Topic (F1) columns are not run: Reiml 2023 trains a classification head on the frozen encoder for "
           "ten epochs at 1e-3 (§5.2.2), which the project does not implement.",
           "Tables 6.6 and 6.8 compare \"the scores on the individual STS splits, instead of using the recommended "
           "SentEval toolkit\" (§5.2.2): their targets read one Spearman over each year's pairs pooled "
           "(sts12_pooled_spearman ...), STS-B's and SICK-R's test Spearman."),
)

# --- §5.6.1, Tables 6.14-6.17: topic-sensitive embeddings -------------------------------------------------------------
TOPIC_SETUP = "§5.6.1"
MLM_QUOTE = ('"MLM training on RoBERTa using all the approximately 75K sentence pairs for 5 epochs with a batch size '
             'of 64 and a learning rate of 3e-5"')
STUDENT_QUOTE = '"Both Bi-Encoders are trained for 5 epochs with a batch size of 64"'
UKP_PAIRS = ('"a pair dataset containing 73364 sentence pairs, each with 2 positive and 2 negative sentence pairs. '
             'The sentence pairs were obtained from semantic search and random search"')
NEWSGROUPS_PAIRS = ('"a pair dataset containing 75424 sentence pairs, each with 4 positive and 4 negative sentence '
                    'pairs"')
TOPIC_DATASETS = ("20newsgroups", "ukp")
PAIRS_PER_SENTENCE = {"20newsgroups": 4, "ukp": 2}  # positives (top_k) and negatives (random) each
PAIRS_SOURCE = cited(THESIS_REIML_2023, TOPIC_SETUP,
                     f"UKP: {UKP_PAIRS}; --dataset 20newsgroups sets 4: {NEWSGROUPS_PAIRS}")
MLM_PAIRS, MLM_EPOCHS, MLM_BATCH = 75_000, 5, 64

TOPIC_DISTILLATION_PROTOCOL = Protocol(
    settings={
        **FINE_TUNING,
        "select_checkpoint": Sourced("best_sts_dev", REIML_SELECTION),
        "max_seq_length": Sourced(128, project_choice("Reiml 2023 gives no maximum sequence length")),
        **sourced(PAIRS_SOURCE, top_k=2, random_pairs_per_sentence=2),
    },
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Tables 6.16-6.17", '"Results are averaged over 3 random seeds"; '
                           "Tables 6.14-6.15 average 2")),
    grids={
        "pretrained_method": Sourced(["frozen_encoder"], cited(THESIS_REIML_2023, "Table 6.14", "Pretrained RoBERTa")),
        "classifier_method": Sourced(["topic_classifier"], cited(THESIS_REIML_2023, TOPIC_SETUP, '"we establish a '
                                                                 'baseline method using a simple classification '
                                                                 'objective"')),
        "distilled_method": Sourced(["augsbert"], cited(THESIS_REIML_2023, TOPIC_SETUP, '"we use the Augmented SBERT '
                                                        'pipeline to distill multiple versions of Bi-Encoders"')),
        "no_topic_corpus": Sourced([None], cited(THESIS_REIML_2023, TOPIC_SETUP, '"one where each sentence pair is '
                                                 'trained without any topic information"')),
        "classifier_inputs": Sourced(["raw", "prompted"], cited(THESIS_REIML_2023, "Table 6.14", 'rows "Classifier" '
                                                                "Original and Prompted")),
        "topic_prompt": Sourced(["shown", "hidden"], cited(THESIS_REIML_2023, TOPIC_SETUP, '"The second Bi-Encoder '
                                                           'is trained on  $(x_1, x_2, s)$ , which represents the '
                                                           'hidden prompt setting"')),
        "student_init": Sourced(["domain", "model"], cited(THESIS_REIML_2023, TOPIC_SETUP, '"we then use either the '
                                                           'MLM pre-training (FullDomainSBERT) or the RoBERTa model '
                                                           '(DomainSBERT) as a starting point"')),
    },
    method_settings={
        "topic_classifier": {
            "select_checkpoint": Sourced("last", project_choice("Reiml 2023 §5.1 keeps the epoch of best F1; the "
                                                                "classifier has no topic dev split here")),
            "epochs": Sourced(5, project_choice("Reiml 2023 §5.6.1 gives the classifier no number of epochs; the "
                                                "bi-encoders' 5")),
            "max_steps": Sourced(None, project_choice("by epochs")),
        },
        "augsbert": {
            "setting": Sourced("domain", cited(THESIS_REIML_2023, TOPIC_SETUP, '"The distillation process starts with '
                                                                        'MLM training on RoBERTa"')),
            "teacher": Sourced("cbe", cited(THESIS_REIML_2023, TOPIC_SETUP, '"to obtain our Cross-Bi-Encoders"')),
            "teacher_epochs": Sourced(5, cited(THESIS_REIML_2023, TOPIC_SETUP, '"Then, we train on the STS-B dataset '
                                                                               'for 5 epochs"')),
            "teacher_lr": Sourced(2e-5, REIML_5_1),
            "sampling": Sourced("semantic_random", cited(THESIS_REIML_2023, TOPIC_SETUP, UKP_PAIRS)),
            "domain_mlm_steps": Sourced(math.ceil(MLM_EPOCHS * MLM_PAIRS / MLM_BATCH), cited(
                THESIS_REIML_2023, TOPIC_SETUP, MLM_QUOTE + ": 5 x 75,000 / 64 steps")),
            **sourced(cited(THESIS_REIML_2023, TOPIC_SETUP, MLM_QUOTE), domain_mlm_batch_size=64, domain_mlm_lr=3e-5),
            **sourced(cited(THESIS_REIML_2023, TOPIC_SETUP, STUDENT_QUOTE), epochs=5, batch_size=64),
            "max_steps": Sourced(None, cited(THESIS_REIML_2023, TOPIC_SETUP, STUDENT_QUOTE)),
            "eval_steps": Sourced(None, REIML_SELECTION),
            "loss": STUDENT_LOSS,
            "pooling": Sourced("mean", project_choice("Reiml 2023 §5.1 leaves pooling at sentence-transformers' "
                                                      "default")),
        },
    },
    quick=QUICK | dict(epochs=None, teacher_epochs=1, teacher_lr=3e-3, domain_mlm_steps=4, domain_mlm_batch_size=8,
                       top_k=1, random_pairs_per_sentence=1),
    notes=("Not run: the Pretrained SBERT rows (Reiml 2023 does not name the model; stage 'pretrained' of a run with "
           "--model set to one scores it), Table 6.16's BWS columns (no prompted BWS task).",
           "Tables 6.15 and 6.17 (SentEval STS) are targets when the run gives --eval-task sts12..sts16, stsb, sickr: "
           "STS12-16 as SentEval's weighted mean over each year's subsets; their Avg. column is not targeted.",
           "The classifier keeps its last epoch (no topic dev split); Reiml 2023 keeps the epoch of best F1.",
           "The Raw (F1) and Prompted (F1) columns are scored by a logistic-regression probe on the frozen encoder's "
           "embeddings (eval tasks `topics` and `topics_prompted`: `LogisticRegressionCV`, its C chosen by an inner "
           "5-fold cross-validation), a project choice: Reiml 2023 writes \"we train a classifier on the original 20 "
           "topics\" (§5.6.2), in §5.2.2 \"a classification head is added to the sentence embedding\" and trained "
           "\"for ten epochs with an increased learning rate of 1e-3\", which the project does not implement. The 36 "
           "F1 targets of Tables 6.14 and 6.16 stand, each compared with the probe's F1: "
           "a difference may be the classifier's."),
)
