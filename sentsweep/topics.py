"""Topic prompts (Reiml (2023), section 4.4): a sentence x with topic label t_y is read as "t_y [T] x", the
delimiter [T] = '¥' (unused in the datasets) marking where the topic ends.

Topic-labelled corpora are "topic<TAB>sentence" lines (UKP Sentential Argument Mining topics, 20 Newsgroups
groups); `sentsweep.tasks.transfer.TopicClassificationTask` measures how well frozen embeddings separate them.
"""

from __future__ import annotations

from pathlib import Path

from sentsweep.data import read_lines
from sentsweep.errors import InputError

TOPIC_DELIMITER = "¥"


def with_topic(sentence: str, topic: str) -> str:
    return f"{topic} {TOPIC_DELIMITER} {sentence}"


def read_topic_corpus(path: str | Path) -> tuple[list[str], list[str]]:
    """(topics, sentences) of a "topic<TAB>sentence" file; a line without both is an `InputError`."""
    topics, sentences = [], []
    for line_number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        topic, separator, sentence = line.partition("\t")
        if not separator or not topic.strip() or not sentence.strip():
            raise InputError(f"{path}, line {line_number}: expected 'topic<TAB>sentence'")
        topics.append(topic.strip())
        sentences.append(sentence.strip())
    if not sentences:
        raise InputError(f"{path}: empty file, no topic-labelled sentence")
    return topics, sentences
