"""The topic-classification baseline of Reiml (2023), an encoder fine-tuned through a classifier head.

`topic_classifier`: the "Classifier" baseline of Reiml (2023) §5.6.1 and Tables 6.14-6.17: "a simple
classification objective, where a classifier head is used to classify the topic label". A linear layer over
the pooled sentence embedding is trained with cross-entropy on the class labels of `topic_corpus`, the
encoder fine-tuned with it (its embeddings are then evaluated like every method's: the tables score it on
STS, where it falls far below the pretrained model, so the encoder was not frozen); `classifier_inputs`
'raw' ("Original") or 'prompted' (each sentence with its topic prompt, "Prompted").
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, load_sentence_model, preprocess_on_device
from sentsweep.references import THESIS_REIML_2023
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.topics import read_topic_table
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.sbert import trial_device
from sentsweep.trainables.settings import Method, Trial


@dataclass(frozen=True)
class TopicClassifierSettings(Settings):
    """The topic-classification baseline: an encoder and a linear head trained on topic labels."""

    topic_corpus: str = setting(help='"topic<TAB>sentence" or "label<TAB>prompt<TAB>sentence" lines: the training '
                                'sentences and their classes', source=required_input())
    pooling: str = setting("mean", "how token vectors become the sentence vector the head reads",
                           project_choice("Reiml 2023 §5.6.1 does not say; SBERT's mean, as for the bi-encoders"),
                           choices=POOLING_MODES)
    classifier_inputs: str = setting(
        "raw", "raw: the sentences; prompted: each with its topic prompt 'prompt ¥ sentence'",
        cited(THESIS_REIML_2023, "Tables 6.14-6.17", 'rows "Classifier Original" and "Classifier Prompted"'),
        choices=("raw", "prompted"))


def check_topic_classifier(trial: Trial) -> None:
    corpus = read_topic_table(trial.settings.topic_corpus)
    if len(set(corpus.labels)) < 2:
        raise InputError(f"topic_corpus={trial.settings.topic_corpus!r} has a single class "
                         f"{corpus.labels[0]!r}: nothing to classify")


class TopicClassifier(torch.nn.Module):
    """A sentence encoder and a linear head over its sentence embedding: logits over the topic classes."""

    def __init__(self, encoder, classes: list[str]) -> None:
        super().__init__()
        self.encoder = encoder
        self.classes = classes
        self.head = torch.nn.Linear(encoder.get_sentence_embedding_dimension(), len(classes)).to(encoder.device)

    def forward(self, texts: list[str]) -> torch.Tensor:
        features = preprocess_on_device(self.encoder, texts)
        return self.head(self.encoder(features)["sentence_embedding"])


def build_topic_classifier(trial: Trial) -> TrainingSetup:
    settings, training = trial.settings, trial.training
    corpus = read_topic_table(settings.topic_corpus)
    classes = sorted(set(corpus.labels))
    index = {label: position for position, label in enumerate(classes)}
    texts = corpus.prompted() if settings.classifier_inputs == "prompted" else corpus.sentences
    examples = [(text, index[label]) for text, label in zip(texts, corpus.labels)]
    torch.manual_seed(trial.seed)
    encoder = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=trial_device(),
                                  dropout=training.dropout)
    classifier = TopicClassifier(encoder, classes)

    def batch_loss(batch, rng):
        labels = torch.tensor([label for _, label in batch], device=encoder.device)
        return torch.nn.functional.cross_entropy(classifier([text for text, _ in batch]), labels)

    return TrainingSetup(model=encoder, module=classifier, batch_loss=batch_loss, examples=examples,
                         metrics={"topic_classes": len(classes), "topic_sentences": len(examples)})

TOPIC_CLASSIFIER_METHOD = Method("topic_classifier", TopicClassifierSettings,
                                 lambda trial, session: run_trial(trial, build_topic_classifier, session),
                                 THESIS_REIML_2023, check=check_topic_classifier,
                                 unread_data=lambda trial: ("corpus",))  # it reads topic_corpus
