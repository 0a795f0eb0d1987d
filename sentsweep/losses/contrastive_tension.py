"""Contrastive Tension as the TSDAE paper defines it (Wang et al. (2021), §5.3, App. B; Carlsson et al. (2021)):
two independent encoders from the same starting point score sentence pairs by the dot product of their
embeddings, trained with binary cross-entropy, each sentence paired once with itself (y = 1) or with K random
other sentences (y = 0):

    J_CT(theta1, theta2) = E_(a,b)~D [ y log sigma(f_theta1(a)^T f_theta2(b))
                                       + (1 - y) log(1 - sigma(f_theta1(a)^T f_theta2(b))) ]

The batch loss is -J_CT, its expectation taken as the mean over the batch's pairs. f_theta2 is the encoder
that is evaluated ("we use the second encoder for evaluation", App. B).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLoss
from torch import Tensor, nn

from sentsweep.losses.modes import follow_encoder_mode
from sentsweep.references import CONTRASTIVE_TENSION, Cited


def contrastive_tension_pairs(sentences: list[str], negatives_per_positive: int,
                              rng: random.Random) -> tuple[list[str], list[str], list[float]]:
    """The (a, b, y) pairs of a batch, as three lists: a_i = s_i; b_i = s_i with y_i = 1 where
    i % (K + 1) == 0 (K = `negatives_per_positive`), otherwise b_i = s_j with y_i = 0, s_j the sentence at a
    position j != i drawn uniformly with `rng`. A batch of one sentence gives its positive pair only.

    A negative pair holds two positions of the batch, not necessarily two different texts: a sentence that
    occurs twice in the batch can be its own negative.
    """
    seconds, labels = [], []
    for i, sentence in enumerate(sentences):
        if i % (negatives_per_positive + 1) == 0 or len(sentences) < 2:
            seconds.append(sentence)
            labels.append(1.0)
        else:
            j = rng.randrange(len(sentences) - 1)
            seconds.append(sentences[j + (j >= i)])
            labels.append(0.0)
    return list(sentences), seconds, labels


class ContrastiveTensionBceLoss(Cited, ContrastiveTensionLoss):
    """Contrastive Tension's binary cross-entropy over sentence pairs, with two independent encoders.

        L = -1/N sum_i [ y_i log sigma(s_i) + (1 - y_i) log(1 - sigma(s_i)) ],   s_i = f_theta1(a_i)^T f_theta2(b_i)

    over the N pairs (a_i, b_i) of the batch, y_i = 1 iff a_i and b_i are the same sentence: -J_CT, its
    expectation taken as the mean over pairs. sentence-transformers' ContrastiveTensionLoss, whose modules
    this keeps (`model2` is the given model, the one evaluated; `model1` is a deep copy of it, an independent
    encoder from the same starting point, optimised and checkpointed with this module), sums over the pairs
    instead (BCEWithLogitsLoss with reduction="sum"), so its loss and gradients scale with the batch size.
    The scores are plain dot products (no cosine, no temperature), as in the paper. `contrastive_tension_pairs`
    builds the pairs of a batch.

    References:
        - Kexin Wang, Nils Reimers, Iryna Gurevych (2021), TSDAE: Using Transformer-based Sequential Denoising
          Auto-Encoder for Unsupervised Sentence Embedding Learning, §5.3 (J_CT), App. B (batch size 8,
          RMSProp, segmented learning rate from 1e-5, mean pooling, the second encoder evaluated),
          https://arxiv.org/abs/2104.06979
        - Fredrik Carlsson, Amaru Cuba Gyllensten, Evangelia Gogoulou, Erik Ylipää Hellqvist, Magnus Sahlgren
          (2021), Semantic Re-tuning with Contrastive Tension, ICLR 2021, https://openreview.net/forum?id=Ov_sMNau-PF
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 2.4.5.4 (CT
          maximises the dot product, with unshared weights)

    Inputs:
        +--------------------------------+--------------------------------------------+
        | Inputs                         | Labels                                     |
        +================================+============================================+
        | (sentence_A, sentence_B) pairs | 1 if they are the same sentence, else 0    |
        +--------------------------------+--------------------------------------------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> import torch
        >>> loss = sentsweep.ContrastiveTensionBceLoss(model)
        >>> firsts = sentsweep.preprocess_on_device(model, ["A man is playing a guitar."] * 2)
        >>> seconds = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "It is raining."])
        >>> loss([firsts, seconds], torch.tensor([1.0, 0.0])).shape
        torch.Size([])

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence_A": ["A man is playing a guitar."] * 2,
                                           "sentence_B": ["A man is playing a guitar.", "It is raining."],
                                           "label": [1.0, 0.0]})
        loss = sentsweep.ContrastiveTensionBceLoss(model)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = CONTRASTIVE_TENSION

    def __init__(self, model) -> None:
        super().__init__(model)
        self.criterion = nn.BCEWithLogitsLoss(reduction="mean")

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of (a, b) pairs, `labels` their y (the same sentence where None); `model1`
        trains in `model2`'s mode, as one module of the shared loop does."""
        follow_encoder_mode(self, self.model2)
        return super().forward(sentence_features, labels)
