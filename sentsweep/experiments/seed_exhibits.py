"""Every numbered table and figure of the five source documents, as data: its place ("Table 4", "Figure 4.1"), the
opening words of its caption as the document prints them, and what it is. A result (a number or a curve the
document's own experiments produced) names the sweeps that re-run it, and says why where none targets it or none
can run it (`sentsweep list --coverage`, `sentsweep.experiments.coverage`). The other exhibits (architecture
diagrams, data set statistics, examples, lists of settings or models, results copied from other works) are
listed with their kind, so that the inventory is complete: tests/experiments/test_coverage.py checks that each caption
opens its place in the seed text and that every caption of a document is listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentsweep.references import (
    REPORT_TSDAE_GPL,
    THESIS_MALMBERG_2021,
    THESIS_REIML_2023,
    THESIS_WANG_2022,
    TSDAE,
    Reference,
)

RESULT = "result"
DIAGRAM = "diagram"  # an architecture, a workflow, an evaluation pipeline
STATISTICS = "data set statistics"
EXAMPLE = "example"  # an example of data or of a model's output, no experiment's result
SETUP = "settings or models used"
COPIED = "copied from another work"  # a published result the document reprints


@dataclass(frozen=True)
class SeedExhibit:
    """A numbered table or figure of `document`: `place` ("Table 6.10"), `caption` (its opening words, verbatim),
    `kind` (RESULT or what else it is), `sweeps` (the experiments that re-run it beyond those whose targets cite
    it) and `reason`: why no sweep targets it (internal data, a model that is not public, a figure without
    numbers; required for a result without targets), or, for a targeted one, what of it is not targeted."""

    document: Reference
    place: str
    caption: str
    kind: str = RESULT
    sweeps: tuple[str, ...] = ()
    reason: str = ""


def _exhibits(document: Reference, *rows: tuple) -> list[SeedExhibit]:
    """Rows (place, caption[, kind][, sweeps][, reason]) of `document`: a str third field other than a kind is a
    reason."""
    found = []
    for place, caption, *rest in rows:
        kind = rest.pop(0) if rest and rest[0] in (DIAGRAM, STATISTICS, EXAMPLE, SETUP, COPIED) else RESULT
        sweeps = rest.pop(0) if rest and isinstance(rest[0], tuple) else ()
        reason = rest.pop(0) if rest else ""
        found.append(SeedExhibit(document, place, caption, kind, sweeps, reason))
    return found


EPRODUCT = "eProduct is an eBay-internal evaluation task: no public data gives its metric"
EBERT = "eBert is an eBay-internal model and eBay titles an internal corpus: neither is public"
SILVER_DENSITY = ("a density plot of silver scores, printing no numbers; the silver pairs' scores are logged "
                  "with each trial")
TWITTERPARA = "the TwitterPara panels (refused: no dev split, the paper selects on its test set)"
POS_UNTARGETED = ("not targeted: SBERT-sup. (in-domain supervised SBERT, which labelled_intersection trains one task "
                  "at a time), BERT-flow (not implemented) and USE-large (a TensorFlow Hub model); the words are "
                  "tagged by TextBlob's tagger where the paper used CoreNLP (a Java toolkit), and the findings, stated "
                  "for Figure 4's average over the data sets, are checked on each data set (Figure 7's panels)")
SENTEVAL_UNTARGETED = ("the Pretrained SBERT row (the thesis names no model for it) and the Avg. column (the mean of "
                       "the seven)")

REIML_2023 = _exhibits(
    THESIS_REIML_2023,
    ("Figure 2.1", "BERT input representation.", DIAGRAM),
    ("Figure 2.2", "Overview model architecture for BART.", DIAGRAM),
    ("Figure 2.3", "Overview denoising approaches for BART.", DIAGRAM),
    ("Figure 2.4", "Illustrations of the basic architectures.", DIAGRAM),
    ("Figure 2.5", "Illustrations of the extended architectures.", DIAGRAM),
    ("Figure 2.6", "USE architecture with classification objective function", DIAGRAM),
    ("Figure 2.7", "SBERT architecture with classification objective function", DIAGRAM),
    ("Table 2.1", "SBERT trained on NLI data with the classification objective function", COPIED),
    ("Table 2.2", "Comparison of data augmentations on STS-B development set", COPIED),
    ("Table 2.3", "Comparison of different unsupervised objectives", COPIED),
    ("Figure 2.8", "(a) Unsupervised SimCSE predicts the input sentence itself", DIAGRAM),
    ("Figure 2.9", "Architecture of TSDAE.", DIAGRAM),
    ("Figure 2.10", "Overview of the Semi-Supervised method of the Augmented SBERT.", DIAGRAM),
    ("Figure 2.11", "Overview of the Unsupervised method of the Augmented SBERT.", DIAGRAM),
    ("Figure 2.12", "Comparison of the density distributions of gold standard with silver standard", COPIED),
    ("Table 3.1", "An overview of the STS datasets we use for our evaluation", STATISTICS),
    ("Table 3.2", "An overview of the STS-B dataset", STATISTICS),
    ("Table 3.3", "An overview of the train/dev/test distribution of the STS-B dataset", STATISTICS),
    ("Table 3.4", "Dataset statistics.", STATISTICS),
    ("Table 3.5", "An overview of the Spanish STS datasets", STATISTICS),
    ("Table 3.6", "An overview of the UKP Sentential Argument Mining dataset.", STATISTICS),
    ("Table 3.7", "Mean split-half reliability estimate", STATISTICS),
    ("Table 3.8", "All topics contained in the 20 Newsgroups corpus, with their amount of examples", STATISTICS),
    ("Table 3.9", "All topics contained in the 20 Newsgroups corpus, with their according", STATISTICS),
    ("Table 4.1", "An example, indicating the TSDAE's learning objective", EXAMPLE),
    ("Figure 4.1", "Bi-Encoder architecture for the NM objective", DIAGRAM),
    ("Table 5.1", "Summary of all datasets being used", STATISTICS),
    ("Table 6.1", "Spearman correlation of Bi-Encoder and normal Cross-Encoder on STS-B."),
    ("Table 6.2", "Spearman/Pearson correlation of Cross-Encoder with different activations on STS-B."),
    ("Figure 6.1", "Kernel density estimation of the different activation functions.", ("cross_bi_encoder",),
     "a density plot of the activations' scores, printing no numbers; §6.1.1 describes the ranges it shows (tanh's "
     "predictions below zero, those without activation beyond the data's), which no cell of the sweep's table "
     "measures"),
    ("Table 6.3", "Spearman correlation of all models on STS-B test with BERT."),
    ("Table 6.4", "Spearman correlation of all distilled models on STS-B test"),
    ("Table 6.5", "Spearman correlation of all BWS to BWS distilled models on BWS test"),
    ("Table 6.6", "Spearman correlation of all BWS to BWS distilled models on SentEval benchmarks"),
    ("Table 6.7", "Spearman correlation of all STS-B to BWS distilled models on BWS test"),
    ("Table 6.8", "Spearman correlation of all STS-B to BWS distilled models on SentEval benchmarks"),
    ("Figure 6.2", "Original comparison of the density distributions", COPIED),
    ("Figure 6.3", "Comparison of the density distributions of strategies to get similar pairs", ("augsbert",),
     f"{SILVER_DENSITY}; §6.2's finding on it (the best results \"usually\" from the finetuned semantic search) is "
     "hedged and read off the densities' shapes, no cell of the table"),
    ("Figure 6.4", "Comparison of the density distributions of strategies to apply KDE sampling", ("augsbert",),
     f"{SILVER_DENSITY}; §6.2's finding on it (the iterative approach matches the target distribution) is read off "
     "the densities' shapes, no cell of the table"),
    ("Figure 6.5", "Comparison of the density distributions of our proposed strategies", ("augsbert",),
     f"{SILVER_DENSITY}; the text states no finding on it"),
    ("Table 6.9", "Original evaluation using average precision.", COPIED),
    ("Table 6.10", "Our evaluation using average precision.",
     "not targeted: the Pretrained row (the thesis names no model: \"the Pretrained Transformer has already been "
     "pretrained on 1 billion sentence pairs\")"),
    ("Table 6.11", "Summary of all the original scores for the in-domain tasks", COPIED),
    ("Table 6.12", "Results for AugSBERT semi with CE."),
    ("Table 6.13", "Results for AugSBERT semi with CBE"),
    ("Table 6.14", "Topic results for the supervised setting with the 20 Newsgroups dataset."),
    ("Table 6.15", "SentEval results for the 20 Newsgroups dataset.", f"not targeted: {SENTEVAL_UNTARGETED}"),
    ("Table 6.16", "Topic results for the supervised setting with the UKP Sentential Argument Mining dataset.",
     "not targeted: the BWS columns and the Pretrained SBERT rows (the thesis names no model for them)"),
    ("Table 6.17", "SentEval results for the supervised setting with the UKP Sentential Argument Mining dataset.",
     f"not targeted: {SENTEVAL_UNTARGETED}"),
)

WANG_2022 = _exhibits(
    THESIS_WANG_2022,
    ("Figure 2.1", "Example of how dropout works on neural network", DIAGRAM),
    ("Figure 2.2", "The model structure of CBOW and Skip-gram.", DIAGRAM),
    ("Figure 2.3", "Overview of pre-training and fine-tuning procedures for BERT.", DIAGRAM),
    ("Figure 2.4", "Example of how MLM works.", DIAGRAM),
    ("Figure 2.5", "A simple framework for contrastive learning for sentence representations.", DIAGRAM),
    ("Figure 2.6", "Schematic structure of an autoencoder.", DIAGRAM),
    ("Figure 3.1", "The general structure of SimCSE.", DIAGRAM),
    ("Figure 3.2", "The general framework of ConSERT.", DIAGRAM),
    ("Figure 3.3", "A general structure of CLM autoencoder.", DIAGRAM),
    ("Figure 3.4", "The general structure of MLM autoencoder.", DIAGRAM),
    ("Figure 3.5", "Multi-task learning approach for the combination between contrastive learning and autoencoder.",
     DIAGRAM),
    ("Table 4.1", "Example of eProduct challenge.", EXAMPLE),
    ("Figure 4.1", "eProduct challenge evaluation diagram.", DIAGRAM),
    ("Table 4.2", "Example of Duplicate Question Retrieval", EXAMPLE),
    ("Figure 4.2", "Duplicate Question Retrieval evaluation diagram.", DIAGRAM),
    ("Figure 4.3", "STS evaluation diagram.", DIAGRAM),
    ("Table 4.3", "Example of Sentence pairs with Similarity scores", EXAMPLE),
    ("Table 4.4", "eProduct evaluation dataset statistics", STATISTICS),
    ("Figure 4.4", "The frequency of sentence length of evaluation datasets eProduct.", STATISTICS),
    ("Table 4.5", "Quora and CQADupStack statistics.", STATISTICS),
    ("Table 4.6", "Datasets statistics of Semantic Textual Similarity.", STATISTICS),
    ("Table 5.1", "Training datasets statistics", STATISTICS),
    ("Table 5.2", "Validation datasets statistics", STATISTICS),
    ("Figure 5.1", "The frequency of sentence length of different domains training datasets.", STATISTICS),
    ("Table 5.3", "Basic Experiments Hyperparameters Setup.", SETUP),
    ("Table 5.4", "Comparison results between ConSERT and SimCSE.", f"{EBERT}; {EPRODUCT}"),
    ("Table 5.5", "Results of ConSERT and SimCSE with different random seeds.", f"{EBERT}; {EPRODUCT}"),
    ("Table 5.6", "Compare BM25 with SimCSE", EXAMPLE),
    ("Table 5.7", "Compare BM25 with SimCSE", EXAMPLE),
    ("Table 5.8", "eProduct evaluation results for BM25, SimCSE and their combination", f"{EBERT}; {EPRODUCT}"),
    ("Figure 5.2", "The combination of BM25 and SimCSE", f"{EBERT}; {EPRODUCT}"),
    ("Table 5.9", "Comparison between BCE (Binary Cross Entropy) loss and NT-Xent loss in STS tasks evaluation."),
    ("Table 5.10", "Comparison between BCE and NT-Xent loss in duplicate question retrieval evaluation."),
    ("Figure 5.3", "The evaluation results on Quora using"),
    ("Figure 5.4", "The evaluation results on CQADupStack using"),
    ("Figure 5.5", "Evaluate SimCSE with different batch sizes on eProduct task.", ("batch_size",), EPRODUCT),
    ("Table 5.11", "SimCSE uses eBay titles 100k as training dataset", ("batch_size",), EPRODUCT),
    ("Table 5.12", "SimCSE uses eBay titles 1M/100k/50k/20k/10k as training dataset and train one epoch.",
     f"{EBERT}; {EPRODUCT}"),
    ("Figure 5.6", "SimCSE uses eBay titles 1M as training dataset", f"{EBERT}; {EPRODUCT}"),
    ("Table 5.13", "SimCSE uses eBay titles 1M/100k/50k/20k/10k as training dataset and train 3 epochs.",
     f"{EBERT}; {EPRODUCT}"),
    ("Table 5.14", "SimCSE and autoencoder-based methods use different domain training datasets",
     f"{EBERT}; {EPRODUCT}"),
    ("Table 5.15", "SimCSE and autoencoder-based methods use different domain training datasets", EPRODUCT),
    ("Table 5.16", "The evaluation results on eProduct.", ("multitask_weight",), EPRODUCT),
    ("Table 5.17", "The evaluation results on Quora task."),
)

TSDAE_PAPER = _exhibits(
    TSDAE,
    ("Figure 1", "Architecture of TSDAE.", DIAGRAM),
    ("Table 1", "Dataset statistics.", STATISTICS),
    ("Table 2", "Evaluation using average precision.",
     "not targeted: the BERT-flow, Avg. GloVe and Sent2Vec rows (not implemented), USE-large (a TensorFlow Hub "
     "model, which neither transformers nor sentence-transformers loads), SBERT-supervised (in-domain training on "
     "all of a task's labelled pairs: labelled_intersection trains it at each size it probes), the sub-columns and "
     "the overall Avg."),
    ("Figure 2", "Comparison of different pre-training approaches",
     f"not targeted: {TWITTERPARA}; the curve from \"the pre-trained SBERT-nli-stsb model\" (no stage of the "
     "sweep)"),
    ("Table 3", "Performance (Spearman’s rank correlation) on the STS benchmark test set.",
     "not targeted: the Specific Tasks column (Table 2's averages), the BERT-flow row (not implemented) and "
     "USE-large (a TensorFlow Hub model, which neither transformers nor sentence-transformers loads)"),
    ("Figure 3", "The influence of the number of training sentences (in thousands)", f"not targeted: {TWITTERPARA}; "
     "TSDAE above the others \"often with as little as 1000 unlabeled sentences\" (\"often\": no ordering holds at "
     "every cell)"),
    ("Figure 4", "POS tag for the most relevant content word in a sentence", POS_UNTARGETED),
    ("Table 4", "Test performance/training loss of TSDAE models starting from different checkpoints.",
     "not targeted: the Avg. column"),
    ("Table 5", "Results with different noise types"),
    ("Table 6", "Results with different noise ratio."),
    ("Table 7", "Results with different pooling methods."),
    ("Table 8", "Model checkpoints used in this work.", SETUP),
    ("Table 9", "Evaluation of different checkpoints using average precision.",
     "not targeted: the BERT-flow rows (BERT-flow is not implemented)"),
    ("Table 10", "Intersection point (number of labeled sentence pairs)"),
    ("Figure 5", "The influence of the number of training sentences on the model performance.",
     f"not targeted: {TWITTERPARA}"),
    ("Table 11", "Evaluation on the task of STS using Spearman’s rank correlation."),
    ("Figure 6", "The influence of the number of training sentences on the model performance.",
     f"not targeted: {TWITTERPARA}"),
    ("Figure 7", "The influence of different POS tags on the output similarity scores.", POS_UNTARGETED),
)

MALMBERG_2021 = _exhibits(
    THESIS_MALMBERG_2021,
    ("Figure 2.1", "A simple neural network", DIAGRAM),
    ("Figure 2.2", "Dropout", DIAGRAM),
    ("Figure 2.3", "(Left) Circuit diagram of an RNN.", DIAGRAM),
    ("Figure 2.4", "The Transformer with stacked encoders and decoders.", DIAGRAM),
    ("Figure 2.5", "High-level encoder outline.", DIAGRAM),
    ("Figure 2.6", "Attention mechanism.", DIAGRAM),
    ("Figure 2.7", "The SBERT architecture used in this thesis.", DIAGRAM),
    ("Figure 3.1", "SQuAD example context and corresponding questions", EXAMPLE),
    ("Table 3.1", "Models used in SQuAD experiments", SETUP),
    ("Table 3.2", "Models used in STS-B experiments", SETUP),
    ("Table 4.1", "SQuAD experiments",
     "not targeted: the fine-tuned BERT rows and Log. reg. (declared not runnable in squad_sentence_retrieval)"),
    ("Figure 4.1", "Results from replacing a masked token with the 100th ranked softmax token using BERT using all "
     "sentence pairs in the dataset."),
    ("Figure 4.2", "Results from replacing a masked token with the 100th ranked softmax token using BERT using "
     "sentence pairs with similarity greater than 3.",
     "not targeted: SBERT at dropout 0.1 \"on par with\" TF-IDF (a tie) and \"the Sentence-BERT model improves the "
     "most\" (a difference of two improvements)"),
    ("Figure 4.3", "Results from replacing a masked token with the 100th ranked softmax token using BERT using "
     "sentence pairs with similarity less than 3."),
)

TSDAE_GPL_DRAFT = _exhibits(
    REPORT_TSDAE_GPL,
    ("Figure 1", "Workflow of TSDAE.", DIAGRAM),
    ("Figure 2", "The workflow of GPL's sentence preparation step.", DIAGRAM),
)

EXHIBITS: tuple[SeedExhibit, ...] = (*REIML_2023, *WANG_2022, *TSDAE_PAPER, *MALMBERG_2021, *TSDAE_GPL_DRAFT)
