"""Malmberg (2021)'s findings stated in words (§5.2) about Figures 4.1-4.3, which print no numbers, as orderings of
`sts_distractors`' cells (`sentsweep.analysis.orderings`): a model's top-1 accuracy on a pool file
(`distractors_<bucket>_<k>_top1`: bucket all, ge3, le3 for Figs. 4.1, 4.2, 4.3; k words changed, each figure's x
axis).

Not declared: "The Sentence-BERT model with 0.1 dropout is on par with the large TF-IDF model" (Fig. 4.2: a tie, no
ordering) and "the Sentence-BERT model improves the most" (a difference of two improvements, no ordering of cells).
"""

from __future__ import annotations

from sentsweep.analysis.orderings import Cell, PublishedOrdering, above, rising
from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.settings import cited

CHANGED = (1, 2, 3, 4, 5)  # §3.4.4: tokens changed "ranging from 1 to 5"
TFIDF_FULL = {"method": "tfidf", "max_features": None}  # "TF-IDF with a full-size vector", "the large TF-IDF model"
TFIDF_1024 = {"method": "tfidf", "max_features": 1024}  # "a feature vector of equal size to the Sentence-BERT vectors"
SBERT_01 = {"method": "sbert", "dropout": 0.1}
SBERT_03 = {"method": "sbert", "dropout": 0.3}
MODELS = (TFIDF_FULL, TFIDF_1024, SBERT_01, SBERT_03)

ACCURACY_RISES = cited(THESIS_MALMBERG_2021, "§5.2, Figs. 4.1-4.3",
                       '"The accuracy increases when more tokens are changed"')
TFIDF_OVER_SBERT = cited(THESIS_MALMBERG_2021, "§5.2, Fig. 4.1", '"TF-IDF with a full-size vector outperforms both '
                         'Sentence-BERT models when using all the sentences in the dataset"; "This applies regardless '
                         'of the number of tokens changed"')
SMALL_TFIDF_LOWER = cited(THESIS_MALMBERG_2021, "§5.2, Fig. 4.1", '"Constricting TF-IDF to use a feature vector of '
                          'equal size to the Sentence-BERT vectors severely lowers performance"')
SIMILAR_PAIRS_EASIER = cited(THESIS_MALMBERG_2021, "§5.2, Figs. 4.1 and 4.2", '"While both models improve over the '
                             'accuracy achieved on the dataset containing all sentence pairs"')
TFIDF_OVER_ALL_LE3 = cited(THESIS_MALMBERG_2021, "§5.2, Fig. 4.3", '"The large TF-IDF model outperforms the other '
                           'models when only perturbing the sentence pairs with similarity scores less or equal to 3"')
DROPOUT_CROSSING = cited(THESIS_MALMBERG_2021, "§5.2, Figs. 4.1-4.3", '"A dropout of 0.3 achieves the highest overall '
                         'accuracy, while a dropout of 0.1 boost accuracy on sentences with large similarity with the '
                         'cost of lower accuracy on sentences with lower similarity score"')


def accuracies(bucket: str) -> list[str]:
    """The top-1 accuracies of a figure's pool files, 1 to 5 words changed."""
    return [f"distractors_{bucket}_{k}_top1" for k in CHANGED]


ORDERINGS = (
    PublishedOrdering("each model's accuracy rises with each further word changed, in every bucket",
                      tuple(pair for model in MODELS for bucket in ("all", "ge3", "le3")
                            for pair in rising([Cell(model, metric) for metric in accuracies(bucket)])),
                      ACCURACY_RISES),
    PublishedOrdering("TF-IDF (full vocabulary) above both SBERT models at 1-5 words changed, all pairs",
                      above(TFIDF_FULL, SBERT_01, accuracies("all")) + above(TFIDF_FULL, SBERT_03, accuracies("all")),
                      TFIDF_OVER_SBERT),
    PublishedOrdering("TF-IDF (full vocabulary) above TF-IDF (1,024 terms) at 1-5 words changed, all pairs",
                      above(TFIDF_FULL, TFIDF_1024, accuracies("all")), SMALL_TFIDF_LOWER),
    PublishedOrdering("SBERT (dropout 0.1) and TF-IDF (full vocabulary) each higher on pairs scored >= 3 than on "
                      "all pairs, at 1-5 words changed",
                      tuple((Cell(model, similar), Cell(model, every)) for model in (SBERT_01, TFIDF_FULL)
                            for similar, every in zip(accuracies("ge3"), accuracies("all"))), SIMILAR_PAIRS_EASIER),
    PublishedOrdering("TF-IDF (full vocabulary) above the other three models at 1-5 words changed, pairs scored <= 3",
                      tuple(pair for other in (TFIDF_1024, SBERT_01, SBERT_03)
                            for pair in above(TFIDF_FULL, other, accuracies("le3"))), TFIDF_OVER_ALL_LE3),
    PublishedOrdering("SBERT at dropout 0.3 above 0.1 on all pairs and on pairs scored <= 3, below it on pairs scored "
                      ">= 3 (a crossing), at 1-5 words changed",
                      above(SBERT_03, SBERT_01, accuracies("all") + accuracies("le3"))
                      + above(SBERT_01, SBERT_03, accuracies("ge3")), DROPOUT_CROSSING),
)
