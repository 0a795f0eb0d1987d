"""Topic prompts (Reiml (2023), section 4.4): a sentence x with topic label t_y is read as "t_y [T] x", the
delimiter [T] = '¥' (unused in the datasets) marking where the topic ends.

Topic-labelled corpora are "topic<TAB>sentence" lines (UKP Sentential Argument Mining topics: the topic is both
the class and the prompt), or "label<TAB>prompt<TAB>sentence" lines where the prompt is another text than the
class (20 Newsgroups: the 20 groups are the classes, their parent groups the prompts, section 5.6.1).
`sentsweep.tasks.transfer.TopicClassificationTask` measures how well frozen embeddings separate the classes
(Tables 6.14 and 6.16, "Raw (F1)"); `read_prompted_topic_corpus` gives the same sentences with their prompts,
for the same measurement on prompted inputs ("Prompted (F1)").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_lines
from sentsweep.errors import InputError

TOPIC_DELIMITER = "¥"


def with_topic(sentence: str, topic: str) -> str:
    return f"{topic} {TOPIC_DELIMITER} {sentence}"


@dataclass(frozen=True)
class TopicCorpus:
    """A topic-labelled corpus: per sentence its class label and the topic text of its prompt."""

    labels: list[str]
    prompts: list[str]
    sentences: list[str]

    def prompted(self) -> list[str]:
        """Each sentence with its topic prompt, "prompt ¥ sentence"."""
        return [with_topic(sentence, prompt) for sentence, prompt in zip(self.sentences, self.prompts)]


def read_topic_table(path: str | Path) -> TopicCorpus:
    """The corpus of a "topic<TAB>sentence" or "label<TAB>prompt<TAB>sentence" file (blank lines skipped);
    a line with another number of fields, or an empty one, is an `InputError` naming the file and line."""
    labels, prompts, sentences = [], [], []
    for line_number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) not in (2, 3) or not all(fields):
            raise InputError(f"{path}, line {line_number}: expected 'topic<TAB>sentence' or "
                             "'label<TAB>prompt<TAB>sentence'")
        labels.append(fields[0])
        prompts.append(fields[-2])
        sentences.append(fields[-1])
    if not sentences:
        raise InputError(f"{path}: empty file, no topic-labelled sentence")
    return TopicCorpus(labels, prompts, sentences)


def read_topic_corpus(path: str | Path) -> tuple[list[str], list[str]]:
    """(class labels, sentences) of a topic-labelled file (see `read_topic_table`)."""
    corpus = read_topic_table(path)
    return corpus.labels, corpus.sentences


def read_prompted_topic_corpus(path: str | Path) -> tuple[list[str], list[str]]:
    """(class labels, sentences with their topic prompts "prompt ¥ sentence") of a topic-labelled file: the
    inputs of the frozen-encoder classification on prompted sentences (Tables 6.14 and 6.16, "Prompted (F1)")."""
    corpus = read_topic_table(path)
    return corpus.labels, corpus.prompted()
