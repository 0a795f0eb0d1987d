"""Protocols of the supervised and semi-supervised experiments: Augmented SBERT (Reiml (2023) §5.1,
§5.5, Tables 6.12-6.13), GPL (the TSDAE + GPL report draft) and the labelled-data intersection (TSDAE
paper, Table 10).
"""

from __future__ import annotations

from sentsweep.experiments.protocols.tsdae import PAPER_METHOD_SETTINGS
from sentsweep.references import REPORT_TSDAE_GPL, THESIS_REIML_2023, TSDAE
from sentsweep.settings import cited, project_choice
from sentsweep.sweep.config.protocol import Protocol, Sourced, sourced

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
QUICK = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)

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

GPL_PROTOCOL = Protocol(
    settings={
        "method": Sourced("gpl", cited(REPORT_TSDAE_GPL, "GPL")),
        "queries_per_passage": Sourced(3, cited(REPORT_TSDAE_GPL, "GPL", '"Three queries are generated for each input '
                                                                        'sentence"')),
        "negatives_top_k": Sourced(50, cited(REPORT_TSDAE_GPL, "GPL", '"50 of the most similar sentences are '
                                                                     'retrieved"')),
        **sourced(project_choice("TSDAE+GPL draft gives no training settings"), pooling="mean", lr=2e-5, batch_size=32,
                  max_steps=10_000, eval_steps=1_000, max_seq_length=128, teacher_epochs=3, optimizer="adamw",
                  lr_schedule="constant", warmup_steps=0, weight_decay=0.0, select_checkpoint="best_sts_dev"),
    },
    seeds=Sourced(3, project_choice("TSDAE+GPL draft reports no seeds")),
    grids={"queries_per_passage": Sourced([3], cited(REPORT_TSDAE_GPL, "GPL"))},
    quick=QUICK | dict(queries_per_passage=2, negatives_top_k=5, teacher_epochs=1, teacher_lr=3e-3, sample_size=100),
)

# The TSDAE paper's in-domain supervised SBERT (§5.1, App. B) against an unsupervised method trained with its
# own settings (App. B), for the intersection of App. D / Table 10.
IN_DOMAIN_SBERT = cited(TSDAE, "App. B", '"the number of training epochs is 10; the maximum number of training '
                        'steps is 20K; the batch size is 64 ... early-stopping is applied by checking the validation '
                        'performance"')
UNSUPERVISED_FIXED_STEPS = {
    **sourced(cited(TSDAE, "App. B", '"we do not use early-stopping ... a fixed number of training steps": 100K'),
              max_steps=100_000, epochs=None, select_checkpoint="last"),
    **sourced(project_choice('TSDAE\'s for every method, Reiml 2023 §5.4.1: "constant learning rate of 3e-5, no '
                             'warm-up period, and a weight decay of 0.0"; TSDAE App. B gives CT "a segmented-constant '
                             'scheduling scheme"'),
              lr_schedule="constant", warmup_ratio=0.0, weight_decay=0.0),
    "eval_steps": Sourced(10_000, project_choice("dev is scored to follow the run; it selects nothing")),
}
# SimCSE is the exception to App. B's fixed steps: one epoch of its official code, which stops early on STS-B dev
# (its evaluation interval is PAPER_METHOD_SETTINGS', the official code's).
SIMCSE_OFFICIAL_STOPPING = {
    "max_steps": Sourced(None, cited(TSDAE, "App. B", '"1 epoch of training"')),
    "select_checkpoint": Sourced("best_sts_dev", cited(TSDAE, "App. B, footnote 8", '"For SimCSE, the official code '
                                                       'involves early-stopping on the STS-B development set. We do '
                                                       'not change this setting for this method"')),
}
# Each unsupervised method of TSDAE at its own settings (App. B, §5.2) over the fixed-step rule: a method's own value
# (CT's segmented-constant rate, SimCSE's one epoch) is never replaced by the shared one.
UNSUPERVISED_AT_PAPER_SETTINGS = {
    method: {**UNSUPERVISED_FIXED_STEPS, **settings, **(SIMCSE_OFFICIAL_STOPPING if method == "simcse" else {})}
    for method, settings in PAPER_METHOD_SETTINGS.items()}
INTERSECTION_PROTOCOL = Protocol(
    settings={
        "method": Sourced("sbert", cited(TSDAE, "App. D", '"we train the in-domain supervised SBERT approach with '
                                                           'varying size of labeled training data"')),
        **sourced(IN_DOMAIN_SBERT, epochs=10, max_steps=20_000, batch_size=64),
        "eval_steps": Sourced(None, project_choice("at each epoch's end: sentence-transformers' fit() default, "
                                                   "which TSDAE trained with (App. B)")),
        **sourced(cited(THESIS_REIML_2023, "§5.1", "TSDAE App. B gives no rate; Reiml 2023's fine-tuning defaults"),
                  lr=2e-5, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01),
        "max_seq_length": Sourced(128, project_choice("TSDAE gives no maximum sequence length")),
        "pooling": Sourced("mean", project_choice("sentence-transformers' default pooling; TSDAE names none for "
                                                  "SBERT")),
        "loss": Sourced("cosine", cited(TSDAE, "§5.1", "MNRL for AskUbuntu, CQADupStack and SciDocs, MSE (cosine) "
                                                       "for TwitterPara and STS-B's scored pairs; --target-task "
                                                       "picks it")),
    },
    seeds=Sourced(5, cited(TSDAE, "App. D", '"We set the search precision to the standard deviation of the target '
                                            'score over 5 random seeds"')),
    method_settings=UNSUPERVISED_AT_PAPER_SETTINGS,
    quick=QUICK | dict(max_steps=30, eval_steps=10),
    notes=("The supervised runs stop early on the target task's dev split (--target-task; on STS-B dev without "
           "one); the unsupervised reference trains its fixed steps and reports its last checkpoint (App. B), "
           "SimCSE its one epoch with its official STS-B dev early stopping (App. B, footnote 8).",
           "With --target-task the intersection is found on that task's test score (App. D, Table 10); give its "
           "labelled training pairs with --set train_file=data-train/<task>/supervised (USEB's release).",
           "The supervised stage runs once per bisection probe (at most 12); the card counts one."),
)
