"""Malmberg (2021)'s protocol, every value with its source: SQuAD sentence retrieval (§3.3-§3.4, Table 4.1),
pre-trained BERT's poolings and layers, TF-IDF and SBERT."""

from __future__ import annotations

from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.settings import cited, project_choice

TASK = "squad"
METRIC = f"{TASK}_top1"  # Table 4.1's "Accuracy": the answer sentence ranked first among its paragraph's
TABLE_POOLINGS = ["cls_second_last", "mean_no_special_second_last"]  # §3.3.1's two, from the second-to-last layer
LAST_LAYER_POOLINGS = ["cls", "mean_no_special"]  # the project's extension: the same two from the last layer
SBERT_PARAMS = cited(THESIS_MALMBERG_2021, "§3.4.1", '"These shared parameters were a batch size of 16, a learning '
                     'rate of 2e-5 ... using 10% of the data as warm-up, and fine-tuning for 4 epochs"')
ST_FIT_DEFAULT = ("Malmberg 2021 §3.4.1 gives the warm-up only; sentence-transformers' fit() default, the library "
                  "Malmberg 2021 trains SBERT with (§3.5)")

SQUAD_SENTENCE_RETRIEVAL_PROTOCOL = Protocol(
    settings={
        "max_seq_length": Sourced(128, project_choice("Malmberg 2021 gives no maximum sequence length")),
    },
    seeds=Sourced(3, project_choice('Malmberg 2021 §5.3: "The models used in the experiments in this thesis were '
                                    'trained once" ... "the experiments should be repeated"')),
    grids={
        "pretrained_method": Sourced(["frozen_encoder"], cited(THESIS_MALMBERG_2021, "Table 4.1", "BERT, Pre-trained")),
        "lexical_method": Sourced(["tfidf"], cited(THESIS_MALMBERG_2021, "Table 4.1", "TF-IDF")),
        "fine_tuned_method": Sourced(["sbert"], cited(THESIS_MALMBERG_2021, "Table 4.1", "SBERT, STS-B")),
        "pooling": Sourced(TABLE_POOLINGS + LAST_LAYER_POOLINGS, project_choice(
            'Malmberg 2021 §3.3.1: "[CLS] token as a representation" and "averaging the sentence\'s token embeddings '
            'excluding [CLS] and [SEP] embeddings", "extracted from the second last layer"; the last layer\'s are the '
            "project's")),
        "max_features": Sourced([None, 1024], cited(THESIS_MALMBERG_2021, "§3.3.3", '"The size of this vocabulary was '
                                                    '30277" ... "the top 1024 features ordered by term frequency"')),
    },
    method_settings={
        "tfidf": {"lemmatize": Sourced(True, cited(THESIS_MALMBERG_2021, "§3.3.3, Table 4.1", '"Lemma\'d"'))},
        "sbert": {
            **sourced(SBERT_PARAMS, batch_size=16, lr=2e-5, warmup_ratio=0.1, epochs=4),
            "max_steps": Sourced(None, SBERT_PARAMS),
            "pooling": Sourced("mean_no_special", cited(
                THESIS_MALMBERG_2021, "§2.8", '"Pooling is done by computing the mean of all output embeddings of the '
                'BERT network, excluding [CLS] and [SEP] tokens"')),
            "loss": Sourced("cosine", cited(THESIS_MALMBERG_2021, "§2.8", '"Cosine similarity is then computed '
                                            'between these two networks. The loss is computed using the mean-squared '
                                            'error loss function"')),
            "lr_schedule": Sourced("linear", project_choice(f"{ST_FIT_DEFAULT}: WarmupLinear")),
            "weight_decay": Sourced(0.01, project_choice(ST_FIT_DEFAULT)),
            "select_checkpoint": Sourced("last", project_choice("Malmberg 2021 §3.4.1 fine-tunes for 4 epochs and "
                                                                "names no checkpoint selection")),
            "eval_steps": Sourced(None, project_choice("dev at each epoch's end, to follow the run")),
        },
    },
    quick={"lr": 1e-3, "max_steps": 40, "max_seq_length": 32, "seeds": 2},
    notes=("Table 4.1 is scored on SQuAD (give --eval-task squad=dev-v1.1.json; Malmberg 2021 names no split): each "
           "question against the sentences of its paragraph (sentsweep.tasks.distractors).",
           "Malmberg 2021 §3.3.2 calls SBERT's pooling \"the default mode of 'mean-pooling'\" (sentence-transformers' "
           "mean keeps [CLS] and [SEP]) while §2.8 excludes them; the sweep follows §2.8.",
           "Not run: the fine-tuned BERT rows (no method fine-tunes BERT with a task head on STS-B, QQP or MRPC), the "
           "dropout 0.3 fine-tuned rows and 'Log. reg.' (the SQuAD paper's); SBERT at dropout 0.3 (row 9) is a run "
           "with --set dropout=0.3."),
)
