"""Models that score a sentence pair jointly: the cross-encoder and the Cross-Bi-Encoder (Johanna Reiml (2023),
Sentence Embeddings in Various Supervision Settings, section 4.1).

Both are teachers of Augmented SBERT and GPL and share one interface: `loss(texts1, texts2, labels)` for
training on gold scores in [0, 1], and `predict(texts1, texts2)` for annotating pairs.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from sentsweep.errors import InputError
from sentsweep.models import check_model_source, quiet_transformers
from sentsweep.references import AUGMENTED_SBERT, THESIS_REIML_2023, Cited

# The cross-encoder's output activations of Reiml (2023), Table 6.2; sigmoid is its model (section 4.1.2).
CE_ACTIVATIONS = ("sigmoid", "none", "tanh")


def check_activation(activation: str) -> str:
    if activation not in CE_ACTIVATIONS:
        raise InputError(f"unknown cross-encoder activation {activation!r}; expected one of "
                         f"{', '.join(CE_ACTIVATIONS)}")
    return activation


def activate(logits, activation: str) -> np.ndarray:
    """The cross-encoder's scores from its logits z: sigmoid(z) in (0, 1), z itself ('none'), or tanh(z)."""
    from scipy.special import expit

    logits = np.asarray(logits, dtype=np.float64)
    if check_activation(activation) == "sigmoid":
        return expit(logits)
    return np.tanh(logits) if activation == "tanh" else logits


class CrossEncoderTeacher(Cited):
    """A one-output `CrossEncoder` built from any encoder (hub name or local folder); a new head is random.

    The logit z = w . h_[CLS] + b over "[CLS] x1 [SEP] x2 [SEP]" is trained with binary cross-entropy on
    sigmoid(z) against the gold score (sentence-transformers' `BinaryCrossEntropyLoss`). Its scores are
    activation(z): sigmoid (in (0, 1), section 4.1.2), none (z) or tanh (in (-1, 1)), Table 6.2's three
    variants. The activation only maps the trained model's logits at prediction time: Table 6.2 reports the
    same Spearman for all three (85.33), which only one trained model scored through three monotonic
    functions gives, while their Pearson differs.

    References:
        - Nandan Thakur, Nils Reimers, Johannes Daxenberger, Iryna Gurevych (2021), Augmented SBERT: Data
          Augmentation Method for Improving Bi-Encoders for Pairwise Sentence Scoring Tasks,
          https://arxiv.org/abs/2010.08240
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 4.1.2
          (Cross-Encoder, eq. 4.2-4.3)

    Example::

        import torch

        teacher = CrossEncoderTeacher("bert-base-uncased", max_length=128)
        teacher.loss(["A man is playing a guitar."], ["A man plays music."], torch.tensor([0.8])).backward()
        scores = teacher.predict(["A man is playing a guitar."], ["A dog runs on the beach."])
    """

    reference = AUGMENTED_SBERT

    def __init__(self, name_or_path: str, max_length: int = 128, device: str | None = None,
                 activation: str = "sigmoid") -> None:
        from sentence_transformers.cross_encoder import CrossEncoder
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

        self.activation = check_activation(activation)
        quiet_transformers()
        self.model = CrossEncoder(check_model_source(name_or_path), num_labels=1, max_length=max_length,
                                  device=device or "cpu")
        self._loss = BinaryCrossEntropyLoss(self.model)

    @property
    def module(self) -> nn.Module:
        return self.model

    def loss(self, texts1: list[str], texts2: list[str], labels: torch.Tensor) -> torch.Tensor:
        return self._loss([texts1, texts2], labels.to(self.model.device))

    def predict(self, texts1: list[str], texts2: list[str], batch_size: int = 64, logits: bool = False) -> np.ndarray:
        """The scores activation(z) of the pairs, or their logits z (GPL's margins are taken between logits)."""
        was_training = self.model.training
        self.model.eval()
        raw = self.model.predict(list(zip(texts1, texts2)), batch_size=batch_size, show_progress_bar=False,
                                 convert_to_numpy=True, activation_fn=nn.Identity())
        self.model.train(was_training)
        raw = np.asarray(raw, dtype=np.float64).ravel()
        return raw if logits else activate(raw, self.activation)


class CrossBiEncoder(Cited, nn.Module):
    """The Cross-Bi-Encoder on a transformers encoder.

    The pair is encoded as one sequence "[CLS] x1 [SEP] [CLS] x2 [SEP]" (an extra [CLS]), so the two sentences
    attend to each other; u is the mean of the hidden states from the first [CLS] to the first [SEP], v the
    mean from the second [CLS] to the second [SEP], and the score is cos(u, v) in [-1, 1], the same scoring
    function as the bi-encoder it teaches. Trained like SBERT's CosineSimilarityLoss:

        L = mean_i (cos(u_i, v_i) - y_i)^2

    References:
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 4.1.2
          (Cross-Bi-Encoder, eq. 4.1)

    Example::

        import torch

        teacher = CrossBiEncoder("bert-base-uncased", max_length=128)
        teacher.loss(["A man is playing a guitar."], ["A man plays music."], torch.tensor([0.8])).backward()
        scores = teacher.predict(["A man is playing a guitar."], ["A dog runs on the beach."])
    """

    reference = THESIS_REIML_2023

    def __init__(self, name_or_path: str, max_length: int = 128, device: str | None = None) -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        quiet_transformers()
        source = check_model_source(name_or_path)
        self.tokenizer = AutoTokenizer.from_pretrained(source)
        self.encoder = AutoModel.from_pretrained(source, add_pooling_layer=False)
        self.max_length = max_length
        self.to(device or "cpu")

    @property
    def module(self) -> nn.Module:
        return self

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def encode_pairs(self, texts1: list[str], texts2: list[str]) -> dict[str, torch.Tensor]:
        """Input ids "[CLS] x1 [SEP] [CLS] x2 [SEP]" (each sentence cut to half the length), padded, with the
        masks of the two spans (first [CLS]..first [SEP], second [CLS]..second [SEP], both inclusive)."""
        half = self.max_length // 2
        first = self.tokenizer(texts1, truncation=True, max_length=half)["input_ids"]
        second = self.tokenizer(texts2, truncation=True, max_length=half)["input_ids"]
        length = max(len(a) + len(b) for a, b in zip(first, second))
        pad = self.tokenizer.pad_token_id
        input_ids = torch.full((len(first), length), pad, dtype=torch.long)
        token_type_ids = torch.zeros((len(first), length), dtype=torch.long)
        span1 = torch.zeros((len(first), length))
        span2 = torch.zeros((len(first), length))
        for row, (a, b) in enumerate(zip(first, second)):
            input_ids[row, : len(a) + len(b)] = torch.tensor(a + b)
            token_type_ids[row, len(a): len(a) + len(b)] = 1
            span1[row, : len(a)] = 1
            span2[row, len(a): len(a) + len(b)] = 1
        features = {"input_ids": input_ids, "attention_mask": (span1 + span2).long(), "span1": span1, "span2": span2}
        if "token_type_ids" in self.tokenizer.model_input_names:
            features["token_type_ids"] = token_type_ids
        return {key: value.to(self.device) for key, value in features.items()}

    def forward(self, texts1: list[str], texts2: list[str]) -> torch.Tensor:
        """cos(u, v) for each pair."""
        features = self.encode_pairs(texts1, texts2)
        inputs = {k: v for k, v in features.items() if k not in ("span1", "span2")}
        hidden = self.encoder(**inputs).last_hidden_state
        u = (hidden * features["span1"].unsqueeze(-1)).sum(1) / features["span1"].sum(1, keepdim=True)
        v = (hidden * features["span2"].unsqueeze(-1)).sum(1) / features["span2"].sum(1, keepdim=True)
        return torch.nn.functional.cosine_similarity(u, v, dim=-1)

    def loss(self, texts1: list[str], texts2: list[str], labels: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mse_loss(self(texts1, texts2), labels.to(self.device).float())

    def predict(self, texts1: list[str], texts2: list[str], batch_size: int = 64) -> np.ndarray:
        was_training = self.training
        self.eval()
        with torch.inference_mode():
            scores = [self(texts1[i:i + batch_size], texts2[i:i + batch_size])
                      for i in range(0, len(texts1), batch_size)]
        self.train(was_training)
        return torch.cat(scores).double().cpu().numpy()


TEACHERS = {"ce": CrossEncoderTeacher, "cbe": CrossBiEncoder}


def build_teacher(kind: str, name_or_path: str, max_length: int = 128, device: str | None = None,
                  activation: str = "sigmoid"):
    """A cross-encoder ('ce', scoring through `activation`) or Cross-Bi-Encoder ('cbe', cosine: `activation`
    does not apply to it) teacher; another kind or activation is an `InputError`."""

    if kind not in TEACHERS:
        raise InputError(f"unknown teacher {kind!r}; expected one of {', '.join(TEACHERS)}")
    check_activation(activation)
    if kind == "ce":
        return CrossEncoderTeacher(name_or_path, max_length, device, activation)
    return TEACHERS[kind](name_or_path, max_length, device)
