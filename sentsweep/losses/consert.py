"""ConSERT (Yan et al., 2021): two augmented views of each sentence, made on the embedding layer, as Ruixiang
Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings, section 3.1.2, describes it.

The augmentations act on the L x d output of the encoder's embedding layer (token shuffle acts on the
position ids fed to it), and the two views are trained with NT-Xent:

- token_shuffle:  the position ids are randomly permuted (the token ids keep their order);
- token_cutoff:   round(r * L) random token rows of the embedding matrix are zeroed;
- feature_cutoff: round(r * d) random feature columns are zeroed;
- dropout:        each element is zeroed with probability r (and the rest scaled by 1 / (1 - r)).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor, nn

from sentsweep.errors import InputError
from sentsweep.losses.contrastive import nt_xent
from sentsweep.references import CONSERT, Cited

AUGMENTATIONS = ("token_shuffle", "token_cutoff", "feature_cutoff", "dropout")


def check_augmentations(names) -> tuple[str, str]:
    """A pair of augmentation names (a single name is used for both views); unknown names are named."""
    names = [names] if isinstance(names, str) else list(names)
    names = [part for name in names for part in name.split(",") if part]
    unknown = [name for name in names if name not in AUGMENTATIONS]
    if unknown or len(names) not in (1, 2):
        raise InputError(
            f"augmentations {names!r}: expected one or two of {', '.join(AUGMENTATIONS)}"
            + (f"; unknown {', '.join(map(repr, unknown))}" if unknown else "")
        )
    return (names[0], names[-1])


def augment_embeddings(embeddings: Tensor, attention_mask: Tensor, name: str, ratio: float, generator) -> Tensor:
    """Apply one embedding-matrix augmentation (cutoffs and dropout; shuffle works on position ids)."""
    batch, length, width = embeddings.shape
    if name == "token_cutoff":
        keep = torch.ones(batch, length, 1, device=embeddings.device)
        for row, real_length in enumerate(attention_mask.sum(1).tolist()):
            cut = torch.randperm(real_length, generator=generator)[: round(ratio * real_length)]
            keep[row, cut.to(embeddings.device)] = 0
        return embeddings * keep
    if name == "feature_cutoff":
        keep = torch.ones(batch, 1, width, device=embeddings.device)
        for row in range(batch):
            keep[row, 0, torch.randperm(width, generator=generator)[: round(ratio * width)].to(embeddings.device)] = 0
        return embeddings * keep
    if name == "dropout":
        keep = (torch.rand(embeddings.shape, generator=generator) >= ratio).to(embeddings.device)
        return embeddings * keep / (1 - ratio)
    return embeddings


def shuffled_position_ids(attention_mask: Tensor, generator) -> Tensor:
    """Per sentence, a random permutation of its real tokens' positions (padding keeps its own)."""
    batch, length = attention_mask.shape
    position_ids = torch.arange(length).repeat(batch, 1)
    for row, real_length in enumerate(attention_mask.sum(1).tolist()):
        position_ids[row, :real_length] = torch.randperm(real_length, generator=generator)
    return position_ids.to(attention_mask.device)


class ConsertLoss(Cited, nn.Module):
    """NT-Xent between two views of each sentence, each made by one ConSERT augmentation (see the module docstring).

        L = NT-Xent(f(aug_1(x)), f(aug_2(x)); tau)

    ConSERT trains the encoder without its own dropout (load it with `dropout=0.0`), so the two views
    differ only by their augmentations. The augmentations draw from `generator` (torch's global generator when
    None, which the trainer's seed fixes); `batch_loss(features, generator)` draws from the one given.
    The defaults are Wang (2022)'s: Token Shuffling + Feature Cutoff (§5.3.1, Table 5.4), ratio 0.2 (§5.3.1),
    temperature 0.05 (Table 5.3).

    References:
        - Yuanmeng Yan et al. (2021), ConSERT: A Contrastive Framework for Self-Supervised Sentence
          Representation Transfer, https://arxiv.org/abs/2105.11741
        - Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
          section 3.1.2 (the four augmentations), eq. 3.2 (the loss); NT-Xent is eq. 2.9

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer without dropout (`config_kwargs` below):

        >>> loss = sentsweep.ConsertLoss(model, ("token_shuffle", "feature_cutoff"), ratio=0.2,
        ...                              temperature=0.05)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()["augmentations"]
        (torch.Size([]), ['token_shuffle', 'feature_cutoff'])

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased",
                                    config_kwargs={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.ConsertLoss(model, ("token_shuffle", "feature_cutoff"), ratio=0.2, temperature=0.05)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = CONSERT

    def __init__(self, model: nn.Module, augmentations=("token_shuffle", "feature_cutoff"), ratio: float = 0.2,
                 temperature: float = 0.05, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.model = model
        self.augmentations = check_augmentations(augmentations)
        self.ratio = ratio
        self.temperature = temperature
        self.generator = generator
        self.embeddings = model[0].auto_model.get_input_embeddings()
        self.embedding_layer = model[0].auto_model.embeddings

    @contextlib.contextmanager
    def _augmented(self, name: str, attention_mask: Tensor, generator):
        handles = []
        if name == "token_shuffle":
            position_ids = shuffled_position_ids(attention_mask, generator)

            def set_positions(module, args, kwargs):
                kwargs["position_ids"] = position_ids
                return args, kwargs

            handles.append(self.embedding_layer.register_forward_pre_hook(set_positions, with_kwargs=True))
        else:
            handles.append(self.embedding_layer.register_forward_hook(
                lambda module, args, output: augment_embeddings(output, attention_mask, name, self.ratio, generator)
            ))
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def view(self, features: dict, name: str, generator) -> Tensor:
        with self._augmented(name, features["attention_mask"], generator):
            return self.model(dict(features))["sentence_embedding"]

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of sentences (one column's features), augmented with `self.generator`'s draws;
        `labels` is unused."""
        (features,) = tuple(sentence_features)
        return self.batch_loss(features, self.generator)

    def batch_loss(self, features: dict, generator: torch.Generator | None) -> Tensor:
        """The loss of a batch's features, its augmentations drawn from `generator`."""
        first = self.view(features, self.augmentations[0], generator)
        second = self.view(features, self.augmentations[1], generator)
        return nt_xent(first, second, self.temperature)

    def get_config_dict(self) -> dict[str, Any]:
        return {"augmentations": list(self.augmentations), "ratio": self.ratio, "temperature": self.temperature}
