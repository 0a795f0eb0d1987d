"""TSDAE on a pre-trained encoder-decoder (BART, T5): the TSDAE paper's Table 4 rows "BART-base" and "T5-base"
(Wang et al. (2021), §8: "we also further train BART-base and T5-base models with TSDAE on the 4 domain-specific
datasets").

The checkpoint's own encoder is the sentence encoder f (its token vectors pooled as the sentence model's pooling
says), and the checkpoint's own pre-trained decoder and language-model head reconstruct the original sentence x
from the single vector f(x~) as the whole of the cross-attention's memory:

    L = -1/N sum_i sum_t log P(x_t | x_<t, f(x~_i))      (N: the number of target tokens in the batch)

The decoder reads x as the checkpoint was pre-trained to: its input is x shifted right behind the checkpoint's
decoder start token (BART's </s>, T5's pad), and every token of x (padding excluded) is a target. Encoder,
decoder and language-model head share the checkpoint's word embeddings, as pre-trained, and all are trained.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from sentsweep.errors import InputError
from sentsweep.losses.modes import follow_encoder_mode
from sentsweep.references import TSDAE, Cited

IGNORED = -100  # the label of a padding position


def is_encoder_decoder(source: str) -> bool:
    """Whether the checkpoint at `source` (a local folder or a hub name) is an encoder-decoder (BART, T5)."""
    from transformers import AutoConfig

    return bool(getattr(AutoConfig.from_pretrained(source), "is_encoder_decoder", False))


class Seq2SeqTsdaeLoss(Cited, nn.Module):
    """TSDAE's reconstruction loss with an encoder-decoder checkpoint's own encoder and decoder.

        L = -1/N sum_i sum_t log P(x_t | x_<t, f(x~_i))

    `model`'s Transformer module is given the checkpoint's encoder (`AutoModelForSeq2SeqLM`'s `get_encoder()`),
    so the sentence model and the decoder share the encoder and the word embeddings; the inputs are pairs of
    feature dicts, the noised sentences x~ (encoded) and the originals x (decoded).

    References:
        - Kexin Wang, Nils Reimers, Iryna Gurevych (2021), TSDAE: Using Transformer-based Sequential Denoising
          Auto-Encoder for Unsupervised Sentence Embedding Learning, §8 and Table 4 (BART-base, T5-base),
          https://arxiv.org/abs/2104.06979

    Examples:
        With `folder` a BART or T5 checkpoint (`build_tiny_encoder_decoder(folder, tokenizer_dir, "bart")` writes a
        tiny one) and `model = load_sentence_model(folder, "cls")`:

        >>> loss = Seq2SeqTsdaeLoss(model, folder)
        >>> noised = preprocess_on_device(model, ["man playing guitar.", "dog runs beach."])
        >>> features = preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs on the beach."])
        >>> loss([noised, features]).shape
        torch.Size([])
    """

    reference = TSDAE

    def __init__(self, model, source: str) -> None:
        super().__init__()
        from transformers import AutoModelForSeq2SeqLM

        self.seq2seq = AutoModelForSeq2SeqLM.from_pretrained(source)
        if self.seq2seq.config.decoder_start_token_id is None:
            raise InputError(f"TSDAE on {source!r}: its config names no decoder_start_token_id to start decoding")
        transformer = model[0]
        transformer.model = self.seq2seq.get_encoder()
        # the encoder reads the token ids and their mask (a BERT-style tokenizer's token_type_ids are not its input)
        transformer.model_forward_params = {"input_ids", "attention_mask"}
        self.encoder = model
        self.pad_token_id = self.seq2seq.config.pad_token_id

    def forward(self, sentence_features, labels=None) -> Tensor:
        follow_encoder_mode(self, self.encoder)
        source, target = tuple(sentence_features)
        sentence_embeddings = self.encoder(source)["sentence_embedding"]
        ids = target["input_ids"]
        targets = ids.masked_fill(target["attention_mask"] == 0, IGNORED)
        logits = self.seq2seq(
            encoder_outputs=(sentence_embeddings[:, None],),
            attention_mask=source["attention_mask"][:, :1],
            decoder_input_ids=self.seq2seq.prepare_decoder_input_ids_from_labels(targets),
            use_cache=False,
        ).logits
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORED)
