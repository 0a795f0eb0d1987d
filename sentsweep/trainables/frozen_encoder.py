"""`frozen_encoder`: a model as released, pooled by `pooling`, scored without any training.

The "Pre-trained" rows of Malmberg (2021) Table 4.1: BERT's [CLS] token or its mean without [CLS] and
[SEP], both from the second-to-last layer (§3.3.1, the poolings of `sentsweep.models.LAYER_POOLING`). The trial
reports the same metrics as a trained method at step 0 (as the lexical baselines do), so the rows sit in the
same tables as the fine-tuned ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from sentsweep.models import POOLING_MODES, check_model_source, load_sentence_model
from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.scorers import EmbeddingScorer
from sentsweep.settings import Settings, project_choice, required_input, setting
from sentsweep.trainables.lexical_baselines import report_untrained_scores
from sentsweep.trainables.settings import Method, Trial


@dataclass(frozen=True)
class FrozenEncoderSettings(Settings):
    model: str = setting(help="Hugging Face model name or local folder, scored as it is", source=required_input())
    max_seq_length: int = setting(help="tokens per text; longer texts are truncated", source=required_input(), ge=1)
    pooling: str = setting(
        "mean", "how token vectors become the sentence vector",
        project_choice("Malmberg 2021 §3.3.1 scores both [CLS] and the mean (without [CLS] and [SEP]); a sweep "
                       "names one"),
        choices=POOLING_MODES)

    def __post_init__(self) -> None:
        check_model_source(self.model)


def score_frozen_encoder(trial: Trial, session=None) -> None:
    """A trial of `frozen_encoder` (see the module docstring)."""
    settings = trial.settings
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(settings.model, settings.pooling, settings.max_seq_length, device)
    report_untrained_scores(trial, EmbeddingScorer(model), session)


FROZEN_ENCODER_METHOD = Method("frozen_encoder", FrozenEncoderSettings, score_frozen_encoder, THESIS_MALMBERG_2021,
                               trains=False)
