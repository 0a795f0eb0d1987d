"""In-batch contrastive objectives written here: SimCSE in one pass, Noise Matching and ConSERT's NT-Xent.

(Contrastive Tension comes from sentence-transformers' ContrastiveTensionLossInBatchNegatives; SimCSE is
the objective of its MultipleNegativesRankingLoss over (x, x) pairs, computed here in one forward pass.)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sentsweep.references import SIMCSE, THESIS_REIML_2023, Cited


def info_nce(anchors: Tensor, positives: Tensor, temperature: float) -> Tensor:
    """Mean over i of -log softmax_j(cos(a_i, p_j) / tau)[i]: in-batch negatives, one direction."""
    scores = F.normalize(anchors, dim=-1) @ F.normalize(positives, dim=-1).T / temperature
    return F.cross_entropy(scores, torch.arange(len(scores), device=scores.device))


def nt_xent(view1: Tensor, view2: Tensor, temperature: float) -> Tensor:
    """NT-Xent (SimCLR; ConSERT's loss) over 2N views: each view's positive is its twin, the other 2N - 2 are
    negatives, as Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
    eq. 2.7-2.9 (and eq. 3.2 for ConSERT), defines it:

        L = 1/(2N) sum_k -log exp(cos(z_k, z_k+) / tau) / sum_{m != k} exp(cos(z_k, z_m) / tau)
    """
    views = F.normalize(torch.cat([view1, view2]), dim=-1)
    scores = views @ views.T / temperature
    scores.fill_diagonal_(float("-inf"))
    n = len(view1)
    twins = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(scores.device)
    return F.cross_entropy(scores, twins)


class NoiseMatchingLoss(Cited, nn.Module):
    """Noise Matching: the noised copy of a sentence is pulled to the original.

    With h_i = f(x_i) for the original and h_i+ = f(T(x_i)) for its deletion-noised copy,

        L = 1/N sum_i -log exp(cos(sg(h_i), h_i+) / tau) / sum_j exp(cos(sg(h_i), h_j+) / tau)

    sg is the stop-gradient: the original is a fixed target, so the model learns that T(x) is similar to x
    (every token of T(x) is in x) but is never pushed to make x similar to its subsequence T(x).
    Both passes run with dropout, as SimCSE's do.

    References:
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 4.2.3 (Figure 4.1)

    Example::

        import random
        from sentsweep.models import load_sentence_model
        from sentsweep.noise import WordNoise

        model = load_sentence_model("bert-base-uncased", "mean")
        loss = NoiseMatchingLoss(model, temperature=0.05)
        sentences = ["A man is playing a guitar.", "A dog runs on the beach."]
        noised = [WordNoise("delete", 0.6)(sentence, random.Random(0)) for sentence in sentences]
        loss(model.preprocess(sentences), model.preprocess(noised)).backward()
    """

    reference = THESIS_REIML_2023

    def __init__(self, model: nn.Module, temperature: float = 0.05) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, original_features: dict, noised_features: dict) -> Tensor:
        with torch.no_grad():
            targets = self.model(original_features)["sentence_embedding"]
        noised = self.model(noised_features)["sentence_embedding"]
        return info_nce(targets, noised, self.temperature)


class SimCseLoss(Cited, nn.Module):
    """Unsupervised SimCSE, with the two dropout views from a single forward pass.

        L = 1/N sum_i -log exp(cos(f(x_i, z), f(x_i, z')) / tau) / sum_j exp(cos(f(x_i, z), f(x_j, z')) / tau)

    The batch is stacked on itself and encoded once: every row gets its own dropout mask, so the two copies
    of x_i are two views (z, z'). The objective is MultipleNegativesRankingLoss over (x, x) pairs with
    scale 1 / tau, at the cost of one larger forward pass instead of two.

    References:
        - Tianyu Gao, Xingcheng Yao, Danqi Chen (2021), SimCSE: Simple Contrastive Learning of Sentence
          Embeddings, section 3 (unsupervised SimCSE), https://arxiv.org/abs/2104.08821
        - Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
          section 3.1.1, eq. 3.1 (the loss above)

    Example::

        from sentsweep.models import load_sentence_model

        model = load_sentence_model("bert-base-uncased", "cls")
        loss = SimCseLoss(model, temperature=0.05)
        loss(model.preprocess(["A man is playing a guitar.", "A dog runs on the beach."])).backward()
    """

    reference = SIMCSE

    def __init__(self, model: nn.Module, temperature: float = 0.05) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, features: dict) -> Tensor:
        doubled = {k: torch.cat([v, v]) if torch.is_tensor(v) else v for k, v in features.items()}
        first, second = self.model(doubled)["sentence_embedding"].chunk(2)
        return info_nce(first, second, self.temperature)
