"""The TSDAE paper's protocols (Wang et al. 2021), every value with its source: its greedy configuration search
(App. A), its main protocol with the unsupervised baselines each at their own settings (§5, App. B), its
corpus-size study (§7.1), the labelled-data intersection (App. D, Table 10), and the stages started from earlier
ones: domain adaptation in both orders (§4, Table 2) and in-domain supervised training after pre-training (§6,
Figures 2 and 5).

App. A: the greedy search on the STS benchmark dev set, 5 seeds, best dev score over evaluations every 1.5K
of 30K steps: noise type at ratio 0.3 with CLS pooling (Table 5), then the deletion ratio 0.1 ... 0.9 (Table
6), then pooling CLS / mean / max (Table 7), all untied; then tying the encoder and decoder (78.77 -> 79.15).
"""

from __future__ import annotations

from sentsweep.references import BERT, SIMCSE, THESIS_REIML_2023, TSDAE
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.search_spaces.reiml_2023 import FINE_TUNING
from sentsweep.search_spaces.shared import CHAIN_NOTE, QUICK, QUICK_CHAIN
from sentsweep.settings import cited, project_choice

APP_A = cited(TSDAE, "App. A", '"The maximum number of training steps is 30K and the models are evaluated every 1.5K '
              'training steps, reporting the best validation performance"')
APP_B_TSDAE = cited(TSDAE, "App. B", '"the batch size is 8; the optimizers are AdamW ...; the initial learning rates '
                    'are 3e-5"')
CONSTANT_RATE = cited(THESIS_REIML_2023, "§5.4.1", '"constant learning rate of 3e-5, no warm-up period, and a '
                      'weight decay of 0.0" (its replication of TSDAE)')
FIVE_SEEDS = Sourced(5, cited(TSDAE, "App. A; §5", '"Scores are obtained by calculating the average over 5 random '
                                                   'seeds"'))
NO_LENGTH = project_choice("TSDAE gives no maximum sequence length")
FIXED_STEPS = cited(TSDAE, "App. B", '"we do not use early-stopping with in-domain labeled data and indicate a fixed '
                    'number of training steps"; for SimCSE (fn. 8) "the official code involves early-stopping on the '
                    'STS-B development set. We do not change this setting for this method"')
# The unsupervised methods' schedule in the main and corpus-size protocols: TSDAE gives TSDAE's only.
TSDAE_SCHEDULE_FOR_ALL = project_choice(
    'TSDAE\'s for every method, Reiml 2023 §5.4.1: "constant learning rate of 3e-5, no warm-up period, and a weight '
    'decay of 0.0"; TSDAE §5.2 trains MLM in "the original setup in Devlin et al. (2019) except the number of training '
    'steps (100K), the batch size (8) and the learning rate (5e-5)", App. B SimCSE with "the official code ... along '
    'with the default hyper-parameters"; CT keeps its own segments')

# Shared by the App. A search stages (tsdae_noise, tsdae_deletion).
SEARCH_SETTINGS = {
    "method": Sourced("tsdae", cited(TSDAE, "App. A")),
    **sourced(APP_B_TSDAE, lr=3e-5, batch_size=8, optimizer="adamw"),
    **sourced(CONSTANT_RATE, lr_schedule="constant", warmup_steps=0, weight_decay=0.0),
    **sourced(APP_A, max_steps=30_000, eval_steps=1_500, select_checkpoint="best_sts_dev"),
    "max_seq_length": Sourced(128, NO_LENGTH),
    "noise_type": Sourced("delete", cited(TSDAE, "App. A, Table 5", '"deletion is the best noise type"')),
    "noise_ratio": Sourced(0.3, cited(TSDAE, "App. A", '"fixing the noise ratio as 0.3 ... and the pooling method as '
                                                       'CLS pooling"')),
    "pooling": Sourced("cls", cited(TSDAE, "App. A", '"fixing ... the pooling method as CLS pooling"')),
    "tie_decoder": Sourced(False, cited(TSDAE, "App. A, Tables 5-7", 'untied until the last step: "tying the encoder '
                                        'and the decoder can further improve the validation score to 79.15" '
                                        "(Tables 6-7: 78.77)")),
}
# App. A, after Table 7: the pooling the paper carries into the tying step, whatever dev says
PAPER_POOLING = Sourced({"pooling": "cls"}, cited(TSDAE, "App. A", '"Since there is little difference between CLS '
                                                  'and mean pooling and mean pooling loses the position information, '
                                                  'the CLS pooling is chosen"'))
SEARCH_GRIDS = {
    "noise_type": Sourced(["delete", "swap", "mask", "replace", "insert"],
                          cited(TSDAE, "App. A, Table 5", "Delete Swap Mask Replace Add")),
    "noise_ratio": Sourced([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], cited(TSDAE, "App. A, Table 6")),
    "pooling": Sourced(["cls", "mean", "max"], cited(TSDAE, "App. A, Table 7")),
    "tie_decoder": Sourced([False, True], cited(TSDAE, "App. A", '"Finally, we find that tying the encoder and the '
                                                                  'decoder can further improve"')),
}
QUICK_SETTINGS = dict(lr=1e-3, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)
QUICK_GRIDS = dict(noise_type=["delete", "swap", "mask"], noise_ratio=[0.3, 0.6], pooling=["cls", "mean"])

SEARCH_PROTOCOL = Protocol(
    settings=SEARCH_SETTINGS, seeds=FIVE_SEEDS, grids=SEARCH_GRIDS, quick=QUICK_SETTINGS,
    notes=("Table 7 scores mean pooling 78.84 against CLS's 78.77 and the paper keeps CLS (\"mean pooling loses the "
           "position information\"); tsdae_noise does the same by default (--pooling-rule paper), or keeps "
           "whichever is best on dev (--pooling-rule best_dev).",
           "The corpus of App. A is SNLI + MultiNLI without labels (give it with --corpus)."),
)

# The TSDAE paper's best configuration (§3, App. A) and the settings of each unsupervised method of its main
# comparison (§5.2, App. B), used by the main protocol and the corpus-size study.
BEST_CONFIGURATION = {
    "noise_type": Sourced("delete", cited(TSDAE, "§3, App. A", '"adopting deletion as the input noise and setting '
                                                                'the deletion ratio to 0.6"')),
    "noise_ratio": Sourced(0.6, cited(TSDAE, "§3, App. A, Table 6")),
    "tie_decoder": Sourced(True, cited(TSDAE, "§3, App. A", '"tying the encoder and decoder parameters"')),
}
APP_B_CT = cited(TSDAE, "App. B", '"RMSProp ... 1e-5 ... segmented-constant scheduling scheme ... The pooling method '
                 'for CT and BERT-flow is both mean pooling"')
APP_B_SIMCSE = cited(TSDAE, "App. B", '"1 epoch of training, batch size of 512, AdamW optimizer with learning rate '
                     '5e-5 and a linear layer on the CLS token embedding as the pooling method"')
MLM_SETUP = cited(TSDAE, "§5.2", '"the number of training steps (100K), the batch size (8) and the learning rate '
                  '(5e-5) ... mean-pooling"')
# TSDAE §5.2 takes the rest of MLM's setup from BERT: "We use the original setup in Devlin et al. (2019) except the
# number of training steps (100K), the batch size (8) and the learning rate (5e-5)".
DEVLIN_SETUP = cited(BERT, "App. A.2", 'outside the seeds, as TSDAE §5.2 points to it: "L2 weight decay of 0.01, '
                     'learning rate warmup over the first 10,000 steps, and linear decay of the learning rate"')
# TSDAE fn. 8 keeps SimCSE's early stopping; its interval is the official code's (outside the seeds).
SIMCSE_EARLY_STOPPING = cited(TSDAE, "App. B, fn. 8", '"For SimCSE, the official code involves early-stopping on the '
                              'STS-B development set. We do not change this setting for this method"')
SIMCSE_CODE = cited(SIMCSE, "official code", "outside the seeds, as TSDAE App. B points to it: run_unsup_example.sh "
                    "evaluates every 125 steps; its transformers Trainer decays the rate linearly, no warm-up, "
                    "weight decay 0")
SIMCSE_LENGTH = cited(SIMCSE, "official code", 'outside the seeds, as TSDAE App. B points to it ("we use the official '
                      'code ... along with the default hyper-parameters"): run_unsup_example.sh trains with '
                      '--max_seq_length 32')
PAPER_METHOD_SETTINGS = {
    "tsdae": {**sourced(APP_B_TSDAE, lr=3e-5, batch_size=8, optimizer="adamw"),
              "pooling": Sourced("cls", cited(TSDAE, "§3, App. A, Table 7", '"the CLS pooling is chosen"'))},
    "mlm": {**sourced(MLM_SETUP, lr=5e-5, batch_size=8, pooling="mean"),
            **sourced(DEVLIN_SETUP, warmup_steps=10_000, lr_schedule="linear", weight_decay=0.01)},
    "ct": {**sourced(APP_B_CT, optimizer="rmsprop", lr=1e-5, lr_schedule="ct_segments", pooling="mean"),
           "batch_size": Sourced(8, cited(TSDAE, "App. B", '"the batch size is 8"'))},
    "simcse": {**sourced(APP_B_SIMCSE, epochs=1, batch_size=512, lr=5e-5, pooling="cls_linear"),
               "select_checkpoint": Sourced("best_sts_dev", SIMCSE_EARLY_STOPPING),
               **sourced(SIMCSE_CODE, eval_steps=125, lr_schedule="linear", weight_decay=0.0),
               "max_seq_length": Sourced(32, SIMCSE_LENGTH)},
}
PAPER_METHODS = Sourced(["tsdae", "mlm", "ct", "simcse"], cited(TSDAE, "§5, Table 2", "TSDAE, MLM, CT, SimCSE; "
                                                                "BERT-flow is not implemented"))
# Table 2's "Other previous unsupervised approaches" that need no training data of their own.
BASELINE_METHODS = Sourced(["bm25", "frozen_encoder"], cited(
    TSDAE, "§6, Table 2", "other previous unsupervised approaches: BM25 and BERT-base-uncased; Avg. GloVe and "
    "Sent2Vec are not implemented"))
BASELINE_SETTINGS = {
    "bm25": {"bm25_variant": Sourced("lucene", cited(TSDAE, "App. B", '"For BM25, we use the implementation '
                                                                    'available on Elasticsearch ... with the default '
                                                                    'settings"'))},
    "frozen_encoder": {"pooling": Sourced("mean", cited(TSDAE, "§5.1", '"The unsupervised baseline of '
                                                                      'BERT-base-uncased with mean pooling"'))},
}
MAIN_PROTOCOL = Protocol(
    settings={
        **sourced(cited(TSDAE, "App. B", '"the number of training steps is 100K"'), max_steps=100_000),
        "select_checkpoint": Sourced("last", FIXED_STEPS),
        "eval_steps": Sourced(10_000, project_choice("dev is scored to follow the run; it selects nothing")),
        **sourced(TSDAE_SCHEDULE_FOR_ALL, lr_schedule="constant", weight_decay=0.0),
        "max_seq_length": Sourced(128, NO_LENGTH),
        **BEST_CONFIGURATION,
        "method": Sourced("tsdae", cited(TSDAE, "§3")),
        "pooling": Sourced("cls", cited(TSDAE, "§3", '"using the output of the [CLS] token"')),
        "lr": Sourced(3e-5, APP_B_TSDAE),
        "batch_size": Sourced(8, APP_B_TSDAE),
    },
    seeds=Sourced(5, cited(TSDAE, "§5", '"we report the scores averaged over 5 random seeds"')),
    grids={"method": PAPER_METHODS, "baseline": BASELINE_METHODS},
    method_settings=PAPER_METHOD_SETTINGS | BASELINE_SETTINGS,
    quick=QUICK_SETTINGS | dict(eval_steps=20),
    notes=("SimCSE runs one epoch (App. B, the official code's setting), the others 100K steps.",
           "SimCSE alone keeps its early stopping on STS-B dev (fn. 8), scored every 125 steps so that it happens "
           "within its one epoch; give the STS benchmark with --sts-dir (the demo dev split is not STS-B).",
           "CT evaluates its second encoder (App. B); the first is trained beside it.",
           "With --eval-task, a stage 'baselines' scores Table 2's BM25 (Elasticsearch's BM25 at its defaults, "
           "App. B: the Lucene formula) and BERT-base-uncased with mean pooling (the model as released, --model) on "
           "each task; they train nothing.",
           "Table 2 reports USEB's four tasks (average precision), each column a model trained on that task's own "
           "sentences (§4.1): give each task with --eval-task NAME=PATH and its training sentences with "
           "--task-corpus NAME=PATH (USEB's data-train/NAME/unsupervised/train.txt); every method then trains once "
           "per task and is scored on that task alone. Without --eval-task, the sweep trains one model per method on "
           "--corpus and reports STS only (Table 3's quantity, on Wikipedia sentences in the paper)."),
)

# §7.1's length, evaluation and selection replace each method's own (SimCSE's one epoch and early stopping).
CORPUS_SIZE_RULES = ("epochs", "eval_steps", "select_checkpoint")
# §7.1's runs last 10 epochs of 128 to 65,536 sentences: 160 to 81,920 steps at batch 8. Devlin's 10,000 warm-up
# steps would outlast six of the ten sizes, whose MLM would never train at §5.2's rate; as a share of the run it
# is the main protocol's (10,000 of 100K steps), and every size reaches the rate.
MLM_SCALED_WARMUP = {
    "warmup_steps": Sourced(0, project_choice("the warm-up is a share of the run here: warmup_ratio")),
    "warmup_ratio": Sourced(0.1, project_choice(
        'Devlin et al.\'s 10,000 warm-up steps (outside the seeds) as the share of the main protocol\'s 100K steps '
        '(TSDAE App. B: "the number of training steps is 100K") that they are: a fixed 10,000 would outlast the runs '
        'of six of §7.1\'s ten corpus sizes, whose MLM would then never train at TSDAE §5.2\'s "learning rate '
        '(5e-5)"')),
}
CORPUS_SIZE_PROTOCOL = Protocol(
    settings={
        **sourced(cited(TSDAE, "§7.1", '"train a bert-base-uncased model with 10 epochs up to 100k training steps. The '
                                       'models are evaluated at the end of each epoch and the best score on the '
                                       'development set is reported"'),
                  epochs=10, max_steps=100_000, eval_steps=None),
        "select_checkpoint": Sourced("best_sts_dev", project_choice("without a target task (--target-task): §7 "
                                                                    "selects on each task's own dev split")),
        **sourced(TSDAE_SCHEDULE_FOR_ALL, lr_schedule="constant", weight_decay=0.0),
        "max_seq_length": Sourced(128, NO_LENGTH),
        **BEST_CONFIGURATION,
        "method": Sourced("tsdae", cited(TSDAE, "§7.1")),
        "pooling": Sourced("cls", cited(TSDAE, "§3")),
        "lr": Sourced(3e-5, APP_B_TSDAE),
        "batch_size": Sourced(8, APP_B_TSDAE),
    },
    seeds=Sourced(5, cited(TSDAE, "App. B", '"we report the scores averaged over 5 random seeds for all the in-domain '
                           'unsupervised and supervised models"')),
    grids={"method": PAPER_METHODS,
           "sample_size": Sourced([2**k for k in range(7, 17)], cited(TSDAE, "§7.1, Fig. 3", '"Between 128 and 65,536 '
                                                                      'sentences"; the points between are powers of '
                                                                      "two (project choice)")),
           "select_checkpoint": Sourced(["best_task_dev"], cited(TSDAE, "§7", '"For all the datasets except '
                                                                 'TwitterPara, the analysis is carried out on the '
                                                                 'development set"'))},
    method_settings={method: {name: value for name, value in settings.items() if name not in CORPUS_SIZE_RULES}
                     | (MLM_SCALED_WARMUP if method == "mlm" else {})
                     for method, settings in PAPER_METHOD_SETTINGS.items()},
    quick=QUICK_SETTINGS | dict(epochs=2, eval_steps=None),
    notes=("Every method trains 10 epochs up to 100K steps here (§7.1), SimCSE included (its main-protocol "
           "setting is 1 epoch), and every one is evaluated after each epoch and reports its best dev epoch.",
           "MLM warms up over the first 10% of its run, not Devlin et al.'s fixed 10,000 steps (the main "
           "protocol's): the runs here last 160 to 81,920 steps, and a fixed 10,000-step warm-up would keep six of "
           "the ten corpus sizes below §5.2's 5e-5 for their whole run (at 128 sentences, a peak of 8e-7)."),
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

# --- §4, §6: stages started from earlier ones (domain adaptation, labelled data after pre-training) ---------
# TSDAE gives the unsupervised methods' settings once (App. B, §5.2) and does not restate them for these setups;
# they are applied here as given there. Its NLI+STS training is two steps, MNRL on SNLI + MultiNLI and the MSE loss
# on STS-B train (§5.1), for which it gives no settings, and it lists no labelled set sizes for Figures 2/5: those
# are the project's, and say so.
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

# §6, Tables 2 and 3: "Out-of-the-box supervised pre-trained models", scored as released (App. B, Table 8 names the
# hub models). USE-large (TensorFlow Hub) is no model the project loads.
OUT_OF_THE_BOX_MODELS = Sourced(
    ["kwang2049/SBERT-base-nli-v2", "kwang2049/SBERT-base-nli-stsb-v2"],
    cited(TSDAE, "App. B, Table 8", '"SBERT-base-nli-v2 https://huggingface.co/kwang2049/SBERT-base-nli-v2", '
          '"SBERT-base-nli-stsb-v2 https://huggingface.co/kwang2049/SBERT-base-nli-stsb-v2"'))
OUT_OF_THE_BOX_PROTOCOL = Protocol(
    settings={
        "pooling": Sourced("mean", project_choice(
            "the released SBERT models' own: sentence-transformers' mean pooling, which they are saved with and "
            "which is kept with every module of theirs as released; TSDAE names none")),
        "max_seq_length": Sourced(128, NO_LENGTH),
    },
    seeds=Sourced(1, project_choice("a released model scored as it is draws nothing at random")),
    grids={"method": Sourced(["frozen_encoder"], cited(TSDAE, "§6", '"out-of-the-box pre-trained models ... achieve '
                                                                    'strong results on our tasks without any '
                                                                    'domain-specific fine-tuning"')),
           "model": OUT_OF_THE_BOX_MODELS},
    quick=dict(max_seq_length=32),
    notes=("Each model is scored as released, without training; Table 2's USE-large row is not run (a TensorFlow Hub "
           "model, App. B, Table 8: https://tfhub.dev/google/universal-sentence-encoder-multilingual-large/3, which "
           "neither transformers nor sentence-transformers loads).",
           "Table 2's columns: give each USEB task with --eval-task NAME=PATH (every model is scored on each); "
           "without one the run scores the STS benchmark (Table 3's STSb column: give it with --sts-dir).",
           "--quick scores the tiny random BERT in place of the two hub models."),
)

# §7.2, Figures 4 and 7: the part-of-speech tag of each relevant pair's most relevant word, for §6's models that the
# project trains or loads: the unsupervised methods at their main-protocol settings (each trained on its target
# task's sentences, §4.1) and the out-of-the-box models as released.
POS_UNSUPERVISED = Sourced(["tsdae", "ct", "simcse"], cited(
    TSDAE, "§7.2", '"This is good news for the unsupervised methods (TSDAE, CT, SimCSE and BERT-flow)"; BERT-flow is '
    'not implemented'))
POS_OUT_OF_THE_BOX = Sourced(["frozen_encoder"], cited(
    TSDAE, "§7.2", '"We are especially interested if we observe differences between in-domain supervised approaches '
    '(SBERT-sup.), out-of-the-box pre-trained approaches, and unsupervised approaches"; the released models of '
    'Table 2 scored as they are'))
POS_TAGS_PROTOCOL = Protocol(
    settings=MAIN_PROTOCOL.settings,
    seeds=MAIN_PROTOCOL.seeds,
    grids={"method": POS_UNSUPERVISED, "out_of_the_box": POS_OUT_OF_THE_BOX, "model": OUT_OF_THE_BOX_MODELS},
    method_settings={**{method: PAPER_METHOD_SETTINGS[method] for method in POS_UNSUPERVISED.value},
                     "frozen_encoder": {"pooling": OUT_OF_THE_BOX_PROTOCOL.settings["pooling"]}},
    quick=MAIN_PROTOCOL.quick,
    notes=("Each relevant pair's most relevant word is the one whose removal from either sentence lowers the "
           "model's cosine most (§7.2: sentsweep/word_relevance.py). Deviation, the project's choice: the words are "
           "tagged by TextBlob's PatternTagger (Penn Treebank tags, its lexicon inside the package, the extra pos), "
           "where TSDAE writes \"POS-tags are determined using CoreNLP (Manning et al., 2014)\", a Java toolkit "
           "whose models no Python package installs offline. The groups, the project's too: a Penn Treebank tag "
           "family as one tag (NN for NN/NNS/NNP/NNPS ...), verbs split into VB-AUX (forms of be, have, do) and "
           "VB-NAUX, a split the paper does not define.",
           "The pairs are those labelled relevant in the split §7 analyses: dev, TwitterPara's test (the tasks "
           "pos_askubuntu, pos_cqadupstack, pos_twitterpara and pos_scidocs read USEB's data-eval folders); each "
           "trial logs every tag group's share of pairs and its prior (the word drawn uniformly among a pair's "
           "words), the task's columns of the table.",
           "Not run: SBERT-sup. (in-domain supervised SBERT on each task's labelled pairs: labelled_intersection "
           "trains it, one task at a time), BERT-flow (not implemented), USE-large (a TensorFlow Hub model).",
           "Figure 4 averages the four data sets and Figure 7 shows each; the findings are checked on each data "
           "set's cells (the sweep's table has one row per method and target task)."),
)
