"""A loss's own modules (decoders, a second encoder) in the mode of the encoder it trains.

`SentenceTransformerTrainer` puts only the model in training mode (and in eval mode to evaluate), not the modules a
loss holds beside it, which `from_pretrained` and `copy.deepcopy` of a model in eval mode leave in eval mode; the
shared loop puts the whole module in training mode. A loss that calls `follow_encoder_mode` before its modules run
trains them with their dropout wherever the encoder trains with its own, so both give the same loss.
"""

from __future__ import annotations

from torch import nn


def follow_encoder_mode(loss: nn.Module, encoder: nn.Module) -> None:
    """Set every child module of `loss` other than `encoder`, with all of its own modules, to `encoder`'s mode
    (training or eval; a module's flag says nothing of its sub-modules', so each is set)."""
    for child in loss.children():
        if child is not encoder:
            child.train(encoder.training)
