"""In-batch contrastive objectives written here: SimCSE in one pass (with its InfoNCE loss, or with the binary
cross-entropy of Wang (2022) eq. 2.10), Noise Matching and ConSERT's NT-Xent.

(Contrastive Tension is in `contrastive_tension`, on sentence-transformers' ContrastiveTensionLoss; SimCSE is
the objective of sentence-transformers' MultipleNegativesRankingLoss over (x, x) pairs, computed here in one
forward pass.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sentsweep.references import SIMCSE, THESIS_REIML_2023, THESIS_WANG_2022, Cited


def encode_views(model: nn.Module, features: dict, views: int = 2) -> tuple[Tensor, ...]:
    """The sentence embeddings of `views` copies of the batch, from one encoder pass over the copies stacked
    ([x; x] for two): every row gets its own dropout mask, so in training the copies are different views of x.
    `features` are the tokenized batch's (not stacked); the result holds one (N, d) tensor per copy.

    Examples:
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs."])
        >>> first, second = sentsweep.encode_views(model, features, views=2)
        >>> first.shape == second.shape == (2, model.get_sentence_embedding_dimension())
        True
    """
    if views == 1:
        return (model(dict(features))["sentence_embedding"],)
    stacked = {k: torch.cat([v] * views) if torch.is_tensor(v) else v for k, v in features.items()}
    return model(stacked)["sentence_embedding"].chunk(views)


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
    (every token of T(x) is in x) but is never pushed to make x similar to its subsequence T(x). Reiml 2023 §4.2.3
    contradicts itself on the side: it puts sg on h_i, "allowing only the gradient to flow backwards through the
    original sentence", then says "the model will only learn to be similar to the original sentence, not the noised
    one". The loss follows sg on h_i and the second sentence: no gradient through the original.
    Both passes run with dropout, as SimCSE's do.

    References:
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 4.2.3 (Figure 4.1)

    Inputs:
        +----------------------------------------------+--------+
        | Inputs                                       | Labels |
        +==============================================+========+
        | (sentence, its deletion-noised copy) pairs   | none   |
        +----------------------------------------------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.NoiseMatchingLoss(model, temperature=0.05)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> noised = sentsweep.preprocess_on_device(model, ["man playing guitar.", "dog runs beach."])
        >>> loss([features, noised], None).shape
        torch.Size([])

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."],
                                           "noised": ["man playing guitar.", "dog runs beach."]})
        loss = sentsweep.NoiseMatchingLoss(model, temperature=0.05)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = THESIS_REIML_2023

    def __init__(self, model: nn.Module, temperature: float = 0.05) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of (sentence, noised copy) pairs: `sentence_features` holds the originals'
        features, then the noised copies'; `labels` is unused."""
        original_features, noised_features = tuple(sentence_features)
        with torch.no_grad():
            targets = self.model(original_features)["sentence_embedding"]
        noised = self.model(noised_features)["sentence_embedding"]
        return info_nce(targets, noised, self.temperature)

    def get_config_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature}


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

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.SimCseLoss(model, temperature=0.05)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()
        (torch.Size([]), {'temperature': 0.05})

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.SimCseLoss(model, temperature=0.05)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = SIMCSE

    def __init__(self, model: nn.Module, temperature: float = 0.05) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of sentences: `sentence_features` holds one column's features; `labels` is
        unused."""
        (features,) = tuple(sentence_features)
        return self.loss_on_views(*encode_views(self.model, features, 2))

    def loss_on_views(self, first: Tensor, second: Tensor) -> Tensor:
        """The loss from the two views' embeddings (f(x_i, z), f(x_i, z')), computed by the caller."""
        return info_nce(first, second, self.temperature)

    def get_config_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature}


def binary_contrastive(first: Tensor, second: Tensor, temperature: float) -> Tensor:
    """Wang (2022) eq. 2.10 over the two views of N sentences: anchor f(x_i) = first[i], positive
    f(x_i^+) = second[i], negatives X_i^- = {first[j], second[j] : j != i} (section 2.4.2's in-batch negatives),

        L = -1/N sum_i [ log s(cos(x_i, x_i^+) / tau) + sum_{x^- in X_i^-} log(1 - s(cos(x_i, x^-) / tau)) ]

    with s the logistic sigmoid (log(1 - s(u)) = log s(-u), computed stably)."""
    anchors = F.normalize(first, dim=-1)
    others = F.normalize(torch.cat([first, second]), dim=-1)
    scores = anchors @ others.T / temperature  # (N, 2N): [anchor i vs first j | anchor i vs second j]
    n = len(first)
    rows = torch.arange(n, device=scores.device)
    positive = torch.zeros_like(scores, dtype=torch.bool)
    positive[rows, rows + n] = True
    negative = torch.ones_like(scores, dtype=torch.bool)
    negative[rows, rows] = False  # an anchor is not its own negative
    negative[rows, rows + n] = False
    log_likelihood = torch.where(positive, F.logsigmoid(scores), torch.zeros_like(scores)) + torch.where(
        negative, F.logsigmoid(-scores), torch.zeros_like(scores))
    return -log_likelihood.sum(1).mean()


class SimCseBceLoss(SimCseLoss):
    """SimCSE with its InfoNCE loss replaced by binary cross-entropy (SimCSE_BCE of Wang (2022), section 5.3.3,
    Tables 5.9 / 5.10): the same two dropout views from one pass over [x; x], scored by eq. 2.10,

        L_BCE = -1/N sum_i [ log g(cos(f(x_i), f(x_i^+))) + sum_{x_i^- in X_i^-} log(1 - g(cos(f(x_i), f(x_i^-)))) ]

    where f(x_i) and f(x_i^+) are the two dropout views of x_i and X_i^- = {f(x_j), f(x_j^+)}_{j != i} are the
    2N - 2 in-batch negatives of x_i (the definition of section 2.4.2): each pair is a separate yes/no decision,
    summed over a sentence's pairs and averaged over the N anchors, as the equation writes it.

    Project choices where the thesis is silent or unreadable: the thesis prints g(x) = sigma(x^tau); this is read
    as g(x) = sigma(x / tau), the temperature scaling of eq. 2.7, with tau = 0.05 of Table 5.3 (section 5.3.3
    keeps Table 5.3's other settings). Only x_i (the first view) is an anchor, as eq. 2.10 has one term per i.

    References:
        - Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
          section 2.4.2, eq. 2.10 (the loss), section 5.3.3, Tables 5.9 and 5.10 (SimCSE with BCE)
        - Tianyu Gao, Xingcheng Yao, Danqi Chen (2021), SimCSE: Simple Contrastive Learning of Sentence
          Embeddings, section 3 (the dropout views), https://arxiv.org/abs/2104.08821

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.SimCseBceLoss(model, temperature=0.05)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()
        (torch.Size([]), {'temperature': 0.05})

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.SimCseBceLoss(model, temperature=0.05)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = THESIS_WANG_2022

    def loss_on_views(self, first: Tensor, second: Tensor) -> Tensor:
        """The loss from the two views' embeddings, computed by the caller."""
        return binary_contrastive(first, second, self.temperature)
