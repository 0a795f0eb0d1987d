"""Protocols of the chained experiments, where a stage starts from the models an earlier stage trained: the TSDAE
paper's domain adaptation in both orders (§4, Table 2) and its pre-training before in-domain supervised
training with growing labelled sets (§6, Figures 2 and 5); Reiml (2023)'s domain MLM before Augmented
SBERT (§4.3.1, Table 6.10).

TSDAE gives the unsupervised methods' settings once (App. B, §5.2) and does not restate them for these setups;
they are applied here as given there. Its NLI+STS training is two steps, MNRL on SNLI + MultiNLI and the MSE loss
on STS-B train (§5.1), for which it gives no settings, and it lists no labelled set sizes for Figures 2/5: those
are the project's, and say so.
"""

from __future__ import annotations

from sentsweep.experiments.protocols.supervised import (
    FINE_TUNING,
    IN_DOMAIN_SBERT,
    QUICK,
    STUDENT_LOSS,
    UNSUPERVISED_AT_PAPER_SETTINGS,
)
from sentsweep.experiments.protocols.tsdae import BEST_CONFIGURATION, NO_LENGTH
from sentsweep.references import THESIS_REIML_2023, TSDAE
from sentsweep.settings import cited, project_choice
from sentsweep.sweep.config.protocol import Protocol, Sourced, sourced

CHAIN_NOTE = ("A chained stage starts each seed from the same seed's model of the stage it names, as that stage "
              "selected and logged it, pooling included (TSDAE does not say which pooling a model keeps from one "
              "step to the next: the project keeps the model's own).")
QUICK_CHAIN = QUICK | dict(max_steps=30, eval_steps=10)

# TSDAE §4, Table 2: "1) Training on NLI+STS data, then unsupervised training to the target domain, 2) Unsupervised
# training on the target domain, then supervised training on NLI + STS." §5.1 says how its SBERT-base-nli-stsb-v2
# was trained on them: "These models were trained on SNLI + MultiNLI data using the Multiple-Negative Ranking Loss
# (MNRL) (Henderson et al., 2017) and the Mean Square Error (MSE) loss on the STS benchmark train set." Here that
# is two steps: sbert_nli (MNRL on the NLI pairs), then sbert (MSE of the cosine on STS-B train) from its model.
NLI_MNRL = cited(TSDAE, "§5.1", '"These models were trained on SNLI + MultiNLI data using the Multiple-Negative '
                 'Ranking Loss (MNRL)"')
STS_MSE = cited(TSDAE, "§5.1", '"and the Mean Square Error (MSE) loss on the STS benchmark train set"')
NLI_STS_LENGTH = sourced(project_choice("TSDAE gives no settings for its NLI+STS steps; one epoch, as "
                                        "sentence-transformers' NLI and STS training examples"),
                         epochs=1, max_steps=20_000, eval_steps=None, select_checkpoint="last")
NLI_STS_STEPS = {
    "sbert_nli": {**FINE_TUNING, **NLI_STS_LENGTH},
    "sbert": {**FINE_TUNING, **NLI_STS_LENGTH, "loss": Sourced("cosine", STS_MSE)},
}
DOMAIN_ADAPTATION_PROTOCOL = Protocol(
    settings={
        "max_seq_length": Sourced(128, NO_LENGTH),
        "pooling": Sourced("mean", project_choice("the supervised steps' pooling: sentence-transformers' default; "
                                                  "TSDAE names none")),
        **BEST_CONFIGURATION,
    },
    seeds=Sourced(5, cited(TSDAE, "§5; Table 2", '"Results are averaged over 5 random seeds"')),
    grids={
        "method": Sourced(["tsdae", "mlm", "ct", "simcse"], cited(TSDAE, "Table 2", "the rows of both domain "
                                                                  "adaptation blocks; BERT-flow is not implemented")),
        "nli_step": Sourced(["sbert_nli"], NLI_MNRL),
        "sts_step": Sourced(["sbert"], STS_MSE),
    },
    method_settings=UNSUPERVISED_AT_PAPER_SETTINGS | NLI_STS_STEPS,
    quick=QUICK_CHAIN,
    notes=(CHAIN_NOTE,
           "Table 2 scores the USEB test sets (AskUbuntu MAP, CQADupStack MAP@100, TwitterPara AP, SciDocs MAP): give "
           "them with --eval-task; each task's unlabelled sentences with --task-corpus NAME=PATH (titles, TSDAE §4.1; "
           "one task alone may take --corpus), the NLI pairs "
           "(SNLI + MultiNLI, sentence-transformers' AllNLI.tsv.gz) with --nli-file, the STS benchmark with --sts-dir "
           "(its sts-train.csv trains the STS step).",
           "The NLI step takes each premise's entailment as positive and one of its contradictions as hard negative "
           "(sentence-transformers' training_nli_v2.py; TSDAE §5.1 names only the data and MNRL); the project's "
           "choice, as is the order NLI, then STS (the order of §5.1's sentence and of the model's name, nli-stsb).",
           "TSDAE §6 says every method gains over target-only training; Table 2 shows that only for target -> NLI+STS "
           "(TSDAE 54.2 and MLM 51.1 after NLI+STS -> target are below their 55.2 and 52.9 unsupervised)."),
)

# TSDAE §6 and Figures 2/5: "We first pre-train on all available unlabeled sentences and then perform in-domain
# supervised training with different labeled training set sizes."
IN_DOMAIN_STEP = {
    "sbert": {
        **sourced(IN_DOMAIN_SBERT, epochs=10, max_steps=20_000, batch_size=64),
        **sourced(cited(THESIS_REIML_2023, "§5.1", "TSDAE App. B gives no rate; Reiml 2023's fine-tuning defaults"),
                  lr=2e-5, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01),
        "eval_steps": Sourced(None, project_choice("at each epoch's end: sentence-transformers' fit() default")),
        "select_checkpoint": Sourced("best_sts_dev", project_choice(
            "without a target task (--target-task); App. B stops early on the validation performance, §6 reports the "
            "task's dev sets")),
        "loss": Sourced("cosine", project_choice(
            "without a target task: STS-B train's scored pairs, the cosine's MSE; with one, the task's loss (TSDAE "
            "§5.1, the grid 'loss')")),
    },
}
IN_DOMAIN_LOSS = Sourced(["mnrl", "cosine"], cited(
    TSDAE, "§5.1", 'the target task\'s: "For AskUbuntu, CQADupStack and SciDocs, where the relevant sentence pairs are '
    'labeled, the in-domain SBERT models are trained with MNRL"; "For TwitterPara, whose relevant scores are '
    'labeled, the MSE loss is adopted to train the in-domain models" (cosine)'))
LABELLED_AFTER_PRETRAINING_PROTOCOL = Protocol(
    settings={"max_seq_length": Sourced(128, NO_LENGTH), **BEST_CONFIGURATION,
              "pooling": Sourced("mean", project_choice("SBERT from BERT-base: sentence-transformers' default"))},
    seeds=Sourced(5, cited(TSDAE, "App. B", '"5 random seeds" for all in-domain models')),
    grids={
        "method": Sourced(["tsdae", "mlm", "ct", "simcse"], cited(TSDAE, "Figure 2", "TSDAE/MLM/CT/SimCSE+SBERT")),
        "supervised": Sourced(["sbert"], cited(TSDAE, "Figure 2", '"SBERT: Training from the standard '
                                                                  'BERT-base-uncased checkpoint"')),
        "sample_size": Sourced([100, 1_000, 10_000], project_choice(
            "TSDAE plots labelled sets 'in thousands' without listing them; its intersection points (App. D, Table "
            "10: 140 to 6,067 pairs) lie in this range. 0 labels: the pre-training stage's own row")),
        "select_checkpoint": Sourced(["best_task_dev"], cited(TSDAE, "§6", '"Scores are reported by evaluation on '
                                                                           'the development sets"')),
        "loss": IN_DOMAIN_LOSS,
    },
    method_settings=UNSUPERVISED_AT_PAPER_SETTINGS | IN_DOMAIN_STEP,
    quick=QUICK_CHAIN,
    notes=(CHAIN_NOTE,
           "The figures plot dev scores of each task (TSDAE §6): give the task with --eval-task (--target-task where "
           "several are given), its unlabelled sentences with --corpus and its labelled training pairs with "
           "--task-pairs NAME=data-train/NAME/supervised (USEB's release). SBERT then trains in-domain with the "
           "task's loss (§5.1) and selects on its dev split; every stage reports the dev score of the checkpoint it "
           "keeps (selected_task_dev), the pre-training's 0 labels included (its checkpoint the last, App. B).",
           "TSDAE §6 also compares \"starting from the pre-trained SBERT-nli-stsb model\"; that curve is not a stage "
           "here: run the sweep's SBERT stages from it with --model.",
           "Figure 5's caption in the seed repeats Figure 6's; Appendix E says it is the larger Figure 2."),
)

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
