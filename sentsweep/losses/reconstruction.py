"""Reconstruction objectives on a shared sentence encoder f (Ruixiang Wang (2022), Improving Unsupervised
Contrastive Learning for Sentence Embeddings, section 3.2; the TSDAE paper, Wang et al. (2021), section 3).

- ClmAutoEncoderLoss (eq. 3.4): a causal decoder predicts x left to right from f(x) alone;
- MlmAutoEncoderLoss (eq. 3.5): a bidirectional decoder predicts the masked tokens of a heavily masked copy
  of x, with f(x) in its first position;
- MaskedLanguageModelingLoss: BERT's MLM on the encoder itself, through a language-model head.

The decoders are `decoder_layers`-layer copies of the encoder's architecture, initialised from the first
layers of the same checkpoint (Wang (2022) uses 2 layers, section 3.2.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sentsweep.losses.modes import follow_encoder_mode
from sentsweep.references import BERT, THESIS_WANG_2022, Cited


def _load_head_model(model_path: str, auto_class, **config_overrides):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model_path)
    for key, value in config_overrides.items():
        setattr(config, key, value)
    return auto_class.from_pretrained(model_path, config=config)


def _checkpoint(model: nn.Module) -> str:
    """The checkpoint the sentence encoder's transformer was loaded from (the path or hub name in its config)."""
    return model[0].auto_model.config._name_or_path


def special_or_padding(tokenizer, features: dict) -> Tensor:
    """1 where a token is special ([CLS], [SEP], ...) or padding, else 0: the tokens never masked."""
    special = [tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
               for ids in features["input_ids"].tolist()]
    return features["input_ids"].new_tensor(special).bool() | (features["attention_mask"] == 0)


def mask_tokens(input_ids: Tensor, never_mask: Tensor, probability: float, mask_token_id: int, generator,
                vocabulary_size: int | None = None) -> tuple[Tensor, Tensor]:
    """(masked input ids, labels): each maskable token is chosen with `probability`, at least one per row.

    Chosen tokens become [MASK]; with `vocabulary_size` given, BERT's recipe instead: 80% [MASK], 10% a random
    token, 10% unchanged. Labels are the original ids at chosen positions and -100 elsewhere.
    """
    candidates = ~never_mask
    chosen = (torch.rand(input_ids.shape, generator=generator).to(input_ids.device) < probability) & candidates
    for row in range(len(input_ids)):  # never a row with nothing to predict
        if not chosen[row].any() and candidates[row].any():
            positions = candidates[row].nonzero().flatten()
            chosen[row, positions[torch.randint(len(positions), (1,), generator=generator)]] = True
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    replacement = torch.full_like(input_ids, mask_token_id)
    if vocabulary_size is not None:
        draw = torch.rand(input_ids.shape, generator=generator).to(input_ids.device)
        random_ids = torch.randint(vocabulary_size, input_ids.shape, generator=generator).to(input_ids.device)
        replacement = torch.where(draw < 0.8, replacement, torch.where(draw < 0.9, random_ids, input_ids))
    return torch.where(chosen, replacement, input_ids), labels


def sentence_sum_token_mean(logits: Tensor, targets: Tensor) -> Tensor:
    """-1/N sum_i sum_t log P(targets[i, t]): token cross-entropies summed within each of the N rows (targets of
    -100 are not predicted and add nothing), then averaged over the rows (eq. 3.4 / 3.5's reduction)."""
    token_losses = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=-100, reduction="none")
    return token_losses.sum(1).mean()


class ClmAutoEncoderLoss(Cited, nn.Module):
    """CLM auto-encoder: a causal Transformer decoder whose cross-attention sees only [f(x)] predicts x left to
    right (TSDAE's decoder, but with no input noise, so x~ = x):

        L = -1/N sum_i sum_t log P(x_t | x_<t, f(x_i))          (Wang (2022), eq. 3.4)

    Reduction, as eq. 3.4 writes it: the token log-likelihoods are summed over each sentence's predicted tokens
    (every real token after the first, [CLS], which starts decoding; padding never counts) and averaged over
    the N sentences. A sentence of T predicted tokens thus weighs about T times a per-token mean, which sets
    the scale of the weight w in the multi-task loss (eq. 3.6).

    `batch_loss(features, sentence)` takes the sentence embeddings f(x) when the caller has computed them (a
    multi-task method shares one encoder pass between its objectives); without them it encodes the batch. The
    decoder is initialised from `model_path` (default: the checkpoint the encoder was loaded from).

    References:
        - Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
          section 3.2.1, eq. 3.4
        - Kexin Wang, Nils Reimers, Iryna Gurevych (2021), TSDAE: Using Transformer-based Sequential Denoising
          Auto-Encoder for Unsupervised Sentence Embedding Learning, section 3.2 (the decoder's cross-attention)

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.ClmAutoEncoderLoss(model, decoder_layers=2)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()["decoder_layers"]
        (torch.Size([]), 2)

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.ClmAutoEncoderLoss(model, decoder_layers=2)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = THESIS_WANG_2022

    def __init__(self, model: nn.Module, model_path: str | None = None, decoder_layers: int = 2) -> None:
        from transformers import AutoModelForCausalLM

        super().__init__()
        self.model = model
        self.decoder_layers = decoder_layers
        self.decoder = _load_head_model(model_path or _checkpoint(model), AutoModelForCausalLM, is_decoder=True,
                                        add_cross_attention=True, num_hidden_layers=decoder_layers)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of sentences (one column's features); `labels` is unused."""
        (features,) = tuple(sentence_features)
        return self.batch_loss(features)

    def batch_loss(self, features: dict, sentence: Tensor | None = None) -> Tensor:
        """The loss of a batch's features, decoded from `sentence` (f(x)) where given, else from their encoding."""
        follow_encoder_mode(self, self.model)
        if sentence is None:
            sentence = self.model(dict(features))["sentence_embedding"]
        input_ids, attention_mask = features["input_ids"], features["attention_mask"]
        logits = self.decoder(
            input_ids=input_ids[:, :-1],
            attention_mask=attention_mask[:, :-1],
            encoder_hidden_states=sentence[:, None],
            use_cache=False,
        ).logits
        targets = input_ids[:, 1:].masked_fill(attention_mask[:, 1:] == 0, -100)
        return sentence_sum_token_mean(logits, targets)

    def get_config_dict(self) -> dict[str, Any]:
        return {"decoder_name_or_path": self.decoder.config._name_or_path, "decoder_layers": self.decoder_layers}


class MlmAutoEncoderLoss(Cited, nn.Module):
    """MLM auto-encoder: a bidirectional decoder reads a heavily masked copy of x whose first (CLS) input
    embedding is replaced by f(x), and predicts the masked tokens M_i:

        L = -1/N sum_i sum_{m in M_i} log P(x_m | f(x_i), x \\ M_i)          (Wang (2022), eq. 3.5)

    Reduction, as eq. 3.5 writes it: the log-likelihoods are summed over each sentence's masked tokens M_i and
    averaged over the N sentences (not averaged over all masked tokens of the batch), so a sentence's term grows
    with its number of masked tokens, which sets the scale of the weight w in the multi-task loss (eq. 3.6).

    `batch_loss(features, generator, sentence)` takes the sentence embeddings f(x) when the caller has computed
    them (a multi-task method shares one encoder pass between its objectives); without them it encodes the batch.
    The masks are drawn from `generator` (`forward`: `self.generator`, torch's global generator when None, which
    the trainer's seed fixes). The decoder is initialised from `model_path` (default: the encoder's checkpoint).

    References:
        - Ruixiang Wang (2022), Improving Unsupervised Contrastive Learning for Sentence Embeddings,
          section 3.2.2, eq. 3.5

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.MlmAutoEncoderLoss(model, decoder_layers=2, mask_ratio=0.8)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()["mask_ratio"]
        (torch.Size([]), 0.8)

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.MlmAutoEncoderLoss(model, decoder_layers=2, mask_ratio=0.8)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = THESIS_WANG_2022

    def __init__(self, model: nn.Module, model_path: str | None = None, decoder_layers: int = 2,
                 mask_ratio: float = 0.8, generator: torch.Generator | None = None) -> None:
        from transformers import AutoModelForMaskedLM

        super().__init__()
        self.model = model
        self.decoder_layers = decoder_layers
        self.decoder = _load_head_model(model_path or _checkpoint(model), AutoModelForMaskedLM,
                                        num_hidden_layers=decoder_layers)
        self.mask_ratio = mask_ratio
        self.mask_token_id = model.tokenizer.mask_token_id
        self.generator = generator

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of sentences (one column's features), masked with `self.generator`'s draws;
        `labels` is unused."""
        (features,) = tuple(sentence_features)
        return self.batch_loss(features, self.generator)

    def batch_loss(self, features: dict, generator: torch.Generator | None, sentence: Tensor | None = None
                   ) -> Tensor:
        """The loss of a batch's features, masked with `generator`'s draws and decoded from `sentence` (f(x))
        where given, else from their encoding."""
        follow_encoder_mode(self, self.model)
        if sentence is None:
            sentence = self.model(dict(features))["sentence_embedding"]
        never_mask = special_or_padding(self.model.tokenizer, features)
        masked_ids, labels = mask_tokens(features["input_ids"], never_mask, self.mask_ratio, self.mask_token_id,
                                         generator)
        inputs_embeds = self.decoder.get_input_embeddings()(masked_ids)
        inputs_embeds = torch.cat([sentence[:, None], inputs_embeds[:, 1:]], dim=1)
        logits = self.decoder(inputs_embeds=inputs_embeds, attention_mask=features["attention_mask"]).logits
        return sentence_sum_token_mean(logits, labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {"decoder_name_or_path": self.decoder.config._name_or_path, "decoder_layers": self.decoder_layers,
                "mask_ratio": self.mask_ratio}


class MaskedLanguageModelingLoss(Cited, nn.Module):
    """BERT's MLM on the encoder itself: 15% of the tokens are chosen (80% of them become [MASK], 10% a random
    token, 10% stay) and predicted through the checkpoint's language-model head:

        L = -1/|M| sum_{m in M} log P(x_m | x \\ M)

    The masks are drawn from `generator` (`forward`: `self.generator`, torch's global generator when None, which
    the trainer's seed fixes; `batch_loss(features, generator)`: the one given). The head is the one of
    `model_path` (default: the checkpoint the encoder was loaded from).

    References:
        - Jacob Devlin, Ming-Wei Chang, Kenton Lee, Kristina Toutanova (2019), BERT: Pre-training of Deep
          Bidirectional Transformers for Language Understanding, section 3.1 (Task #1: Masked LM),
          https://arxiv.org/abs/1810.04805
        - Johanna Reiml (2023), Sentence Embeddings in Various Supervision Settings, section 2.3.1.3

    Inputs:
        +-----------+--------+
        | Inputs    | Labels |
        +===========+========+
        | sentences | none   |
        +-----------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.MaskedLanguageModelingLoss(model, probability=0.15)
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([features], None).shape, loss.get_config_dict()
        (torch.Size([]), {'probability': 0.15})

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.MaskedLanguageModelingLoss(model, probability=0.15)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = BERT

    def __init__(self, model: nn.Module, model_path: str | None = None, probability: float = 0.15,
                 generator: torch.Generator | None = None) -> None:
        from transformers import AutoModelForMaskedLM

        super().__init__()
        self.model = model
        self.generator = generator
        mlm = AutoModelForMaskedLM.from_pretrained(model_path or _checkpoint(model))
        encoder = model[0].auto_model
        # Keep the checkpoint's LM head, but run it on the shared encoder's token states; its output
        # projection is tied to the shared encoder's input embeddings, as in BERT.
        self.lm_head = getattr(mlm, {"bert": "cls", "roberta": "lm_head"}.get(mlm.base_model_prefix, "cls"))
        mlm.get_output_embeddings().weight = encoder.get_input_embeddings().weight
        self.probability = probability
        self.mask_token_id = model.tokenizer.mask_token_id

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """The loss of a batch of sentences (one column's features), masked with `self.generator`'s draws;
        `labels` is unused."""
        (features,) = tuple(sentence_features)
        return self.batch_loss(features, self.generator)

    def batch_loss(self, features: dict, generator: torch.Generator | None) -> Tensor:
        """The loss of a batch's features, masked with `generator`'s draws."""
        follow_encoder_mode(self, self.model)
        encoder = self.model[0].auto_model
        never_mask = special_or_padding(self.model.tokenizer, features)
        masked_ids, labels = mask_tokens(features["input_ids"], never_mask, self.probability, self.mask_token_id,
                                         generator, vocabulary_size=len(self.model.tokenizer))
        states = encoder(input_ids=masked_ids, attention_mask=features["attention_mask"]).last_hidden_state
        logits = self.lm_head(states)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)

    def get_config_dict(self) -> dict[str, Any]:
        return {"probability": self.probability}
