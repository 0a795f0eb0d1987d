"""TSDAE (Wang et al. (2021), sections 3.1-3.2; reviewed by Johanna Reiml (2023), Sentence Embeddings in Various
Supervision Settings, section 2.4.6): the encoder f reads a noised sentence x~, and a causal Transformer
decoder whose cross-attention sees only [f(x~)] reconstructs the original x:

    L = -1/N sum_i sum_t log P(x_t | x_<t, f(x~_i))      (N: the number of target tokens in the batch)

TsdaeLoss is sentence-transformers' DenoisingAutoEncoderLoss (same modules, same initialisation, same dropout
draws, same loss), computed with less work:
- the language-model head and the softmax over the vocabulary run only where a target token is, not on the
  padding positions that the reference scores and then ignores;
- the lookups into the word embeddings the LM head shares (with a tied decoder: the encoder's and the
  decoder's inputs; untied: the decoder's) add their rows straight into the matrix's gradient, instead of
  each building a zero-filled vocabulary-sized gradient that autograd then adds to the LM head's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss
from torch import Tensor, nn

from sentsweep.errors import InputError
from sentsweep.losses.modes import follow_encoder_mode
from sentsweep.references import TSDAE, Cited


class _LookupAddingRowsToGrad(torch.autograd.Function):
    """lookup.weight[ids], whose backward adds the output's gradient into the looked-up rows of weight.grad
    in place (skipping the padding index, as nn.Embedding does).

    The weight comes in inside its module, not as a tensor input, so autograd has no edge from this lookup
    to the weight: the weight's gradient accumulation does not wait for the lookups, takes the LM head's
    dense gradient as .grad when it comes, and the lookups then add their rows to it. `anchor`, an empty
    tensor that requires grad, is the input that puts the lookup on the backward graph.
    """

    @staticmethod
    def forward(ctx, ids: Tensor, anchor: Tensor, lookup: nn.Embedding) -> Tensor:
        ctx.save_for_backward(ids)
        ctx.weight, ctx.padding_idx = lookup.weight, lookup.padding_idx
        return F.embedding(ids, lookup.weight.detach(), lookup.padding_idx)

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        (ids,) = ctx.saved_tensors
        weight = ctx.weight
        ids, rows = ids.reshape(-1), grad_output.reshape(-1, weight.shape[1]).to(weight.dtype)
        if ctx.padding_idx is not None:
            rows = rows * (ids != ctx.padding_idx).unsqueeze(1)
        if weight.grad is None:  # only if the LM head's gradient has not arrived yet
            weight.grad = torch.zeros_like(weight)
        weight.grad.index_add_(0, ids, rows)
        return None, None, None


class RowGradientEmbedding(nn.Embedding):
    """An nn.Embedding (same parameter, same output) whose backward writes into weight.grad directly."""

    def forward(self, ids: Tensor) -> Tensor:
        if not (torch.is_grad_enabled() and self.weight.requires_grad):
            return super().forward(ids)
        anchor = torch.empty(0, device=ids.device, requires_grad=True)
        return _LookupAddingRowsToGrad.apply(ids, anchor, self)


def _plain_lookups_into(module: nn.Module, weight: nn.Parameter) -> list[tuple[nn.Module, str, nn.Embedding]]:
    """(parent, attribute, embedding) for every nn.Embedding in `module` that looks up `weight` with nothing
    but a padding index (no max_norm, no frequency scaling, dense gradients)."""
    return [(parent, name, child) for parent in module.modules() for name, child in parent.named_children()
            if type(child) is nn.Embedding and child.weight is weight and child.max_norm is None
            and not child.scale_grad_by_freq and not child.sparse]


class TsdaeLoss(Cited, DenoisingAutoEncoderLoss):
    """TSDAE's reconstruction loss, as DenoisingAutoEncoderLoss computes it (and faster: see the module docstring).

        L = -1/N sum_i sum_t log P(x_t | x_<t, f(x~_i))      (N: the number of target tokens in the batch)

    The inputs are pairs of feature dicts: the noised sentences x~ (encoded) and the originals x (decoded).

    References:
        - Kexin Wang, Nils Reimers, Iryna Gurevych (2021), TSDAE: Using Transformer-based Sequential Denoising
          Auto-Encoder for Unsupervised Sentence Embedding Learning, section 3.1 (the objective), section 3.2
          (the decoder's cross-attention), https://arxiv.org/abs/2104.06979

    Inputs:
        +------------------------------------------+--------+
        | Inputs                                   | Labels |
        +==========================================+========+
        | (noised sentence, original sentence)     | none   |
        | pairs                                    |        |
        +------------------------------------------+--------+

    Examples:
        With `model` a SentenceTransformer (`SentenceTransformer("bert-base-uncased")`):

        >>> loss = sentsweep.TsdaeLoss(model, tie_encoder_decoder=True)
        >>> noised = sentsweep.preprocess_on_device(model, ["man playing guitar.", "dog runs beach."])
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([noised, features], None).shape
        torch.Size([])

        In sentence-transformers' trainer:

        ```python
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
        import sentsweep

        model = SentenceTransformer("bert-base-uncased")
        train_dataset = Dataset.from_dict({"noised": ["man playing guitar.", "dog runs beach."],
                                           "sentence": ["A man is playing a guitar.", "A dog runs on the beach."]})
        loss = sentsweep.TsdaeLoss(model, tie_encoder_decoder=True)
        SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        ```
    """

    reference = TSDAE

    def __init__(self, model, decoder_name_or_path: str | None = None, tie_encoder_decoder: bool = True) -> None:
        super().__init__(model, decoder_name_or_path, tie_encoder_decoder)
        heads = [name for name, _ in self.decoder.named_children() if name != self.decoder.base_model_prefix]
        if len(heads) != 1:
            raise InputError(f"TSDAE decoder {type(self.decoder).__name__}: expected one language-model head "
                             f"beside its base model, found {heads}")
        self._head_name = heads[0]
        shared = self.decoder.get_output_embeddings().weight
        for parent, name, lookup in _plain_lookups_into(self, shared):
            replacement = RowGradientEmbedding(lookup.num_embeddings, lookup.embedding_dim, lookup.padding_idx,
                                               _weight=shared)
            replacement.weight = shared  # the very parameter, so the tie stays
            setattr(parent, name, replacement)

    def forward(self, sentence_features, labels=None) -> Tensor:
        follow_encoder_mode(self, self.encoder)
        source, target = tuple(sentence_features)
        if self.need_retokenization:
            target = self.retokenize(target)
        sentence_embeddings = self.encoder(source)["sentence_embedding"]
        input_ids = target["input_ids"]
        hidden = self.decoder.base_model(
            input_ids=input_ids[:, :-1],
            encoder_hidden_states=sentence_embeddings[:, None],
            encoder_attention_mask=source["attention_mask"][:, :1],
            use_cache=False,
        ).last_hidden_state
        label_ids = input_ids[:, 1:]
        scored = label_ids != self.tokenizer_decoder.pad_token_id
        logits = getattr(self.decoder, self._head_name)(hidden[scored])
        return F.cross_entropy(logits, label_ids[scored])
