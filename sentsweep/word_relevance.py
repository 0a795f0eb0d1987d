"""The word of a sentence pair that a model's similarity rests on most, and its part of speech: the analysis of
Wang, Reimers and Gurevych (2021), "TSDAE: Using Transformer-based Sequential Denoising Auto-Encoder for
Unsupervised Sentence Embedding Learning", Findings of EMNLP 2021, §7.2 (Figures 4 and 7).

For a sentence pair (a, b) labelled relevant, the most relevant word is (§7.2)

    ŵ = argmax_w ( cossim(a, b) − min(cossim(a ∖ w, b), cossim(a, b ∖ w)) )

"among all words w that appear in either a or b"; "Then, we record the POS tag for ŵ and compute the distribution
of POS tags across all sentence pairs". Here:

- the words of a sentence are its Penn Treebank tokens (NLTK's `TreebankWordTokenizer`, the tokenisation of the
  Penn Treebank that taggers trained on it expect) holding a letter or a digit; punctuation is no word. A word is
  its exact form, so that "The" and "the" are two words;
- a ∖ w is a with every occurrence of w cut out of the text (the characters of its tokens; runs of white space
  left behind are closed), a itself where w is not in a;
- cossim is `similarity(texts1, texts2)`, the cosine of the model's embeddings of each pair (`cosine_of(encode)`
  builds it from an encode function; `sentsweep.scorers.EmbeddingScorer.pair_similarities` is the same for a
  sentence-transformers model); a tie goes to the first candidate, a's words in order, then b's not in a;
- ŵ's tag is the tag of its first occurrence (in a, else in b), each sentence tagged as a whole by `tagger`
  (tokens to Penn Treebank tags; `textblob_tagger`: TextBlob's `PatternTagger`, where TSDAE used CoreNLP);
- the tags are grouped as Figure 4 shows them (`tag_group`): a family of Penn Treebank tags is one group (NN for
  NN, NNS, NNP and NNPS; JJ, RB, PRP, WP likewise), and a verb (VB, VBD, VBG, VBN, VBP, VBZ) is VB-AUX where its
  form is one of be, have and do (their inflections and contractions: `AUXILIARY_FORMS`), VB-NAUX otherwise
  (Figure 4: "VB-AUX/-NAUX represents auxiliary/non-auxiliary verbs"; the paper does not say how it split them).
  A modal is MD, as tagged.

The distribution gives each group's share of the pairs in percent (`GROUPS`, every group listed, 0 included); the
prior, against which §7.2 compares it ("Comparing the in-domain supervised model (SBERT-sup.) and the prior
distribution of the POS tags"), is the distribution ŵ would have if it were drawn uniformly among each pair's
candidate words: each pair adds 1 / (its number of candidates) to the group of each candidate.
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sentsweep.errors import InputError

Similarity = Callable[[list[str], list[str]], np.ndarray]
Tagger = Callable[[list[str]], list[str]]

VERB_TAGS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
# be, have and do with their inflections and contractions as Penn Treebank tokenises them ("is n't", "I 've")
AUXILIARY_FORMS = frozenset({
    "be", "am", "is", "are", "was", "were", "been", "being", "'m", "'re", "'s", "ai",
    "have", "has", "had", "having", "'ve", "'d",
    "do", "does", "did", "doing", "done"})
FAMILIES = {"NNS": "NN", "NNP": "NN", "NNPS": "NN", "JJR": "JJ", "JJS": "JJ", "RBR": "RB", "RBS": "RB",
            "PRP$": "PRP", "WP$": "WP"}
OTHER = "other"  # a tag outside the Penn Treebank's word tags
GROUPS = ("NN", "VB-NAUX", "VB-AUX", "JJ", "RB", "IN", "DT", "PRP", "CD", "CC", "MD", "TO", "RP", "WDT", "WP",
          "WRB", "EX", "PDT", "POS", "FW", "UH", "SYM", "LS", OTHER)
_HAS_WORD_CHARACTER = re.compile(r"[^\W_]")


def tag_group(tag: str, word: str) -> str:
    """The group of Figure 4 that a word of Penn Treebank tag `tag` falls in (see the module docstring)."""
    if tag in VERB_TAGS:
        return "VB-AUX" if word.lower() in AUXILIARY_FORMS else "VB-NAUX"
    group = FAMILIES.get(tag, tag)
    return group if group in GROUPS else OTHER


def tokens(text: str) -> list[tuple[int, int]]:
    """The (start, end) character spans of `text`'s Penn Treebank tokens."""
    # NLTK comes with TextBlob, in the optional extra `pos`: imported where a sentence is analysed
    from nltk.tokenize import TreebankWordTokenizer

    return list(TreebankWordTokenizer().span_tokenize(text))


def without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with the characters of `spans` cut out and the white space left behind closed."""
    kept, start = [], 0
    for span_start, span_end in sorted(spans):
        kept.append(text[start:span_start])
        start = span_end
    kept.append(text[start:])
    return " ".join("".join(kept).split())


def cosine_of(encode: Callable[[list[str]], np.ndarray]) -> Similarity:
    """The cosine of each pair's embeddings, `encode` giving one row per text."""

    def similarity(texts1: list[str], texts2: list[str]) -> np.ndarray:
        first, second = np.asarray(encode(texts1), dtype=float), np.asarray(encode(texts2), dtype=float)
        norms = np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1)
        return np.sum(first * second, axis=1) / np.where(norms > 0, norms, 1.0)

    return similarity


def tagger_problem() -> str | None:
    """Why no part-of-speech tagger can run here (TextBlob not installed), else None."""
    if importlib.util.find_spec("textblob") is None:
        return ("the part-of-speech analysis needs TextBlob, which is not installed: pip install -c constraints.txt "
                "-e '.[pos]' (its tagger and lexicon come with the package)")
    return None


def textblob_tagger() -> Tagger:
    """TextBlob's `PatternTagger` (a Brill-style tagger with its lexicon, Penn Treebank tags; nothing is downloaded)
    on given tokens; an `InputError` where TextBlob is not installed."""
    if problem := tagger_problem():
        raise InputError(problem)
    # TextBlob is the optional extra `pos`: imported where the analysis runs
    from textblob.en.taggers import PatternTagger

    tagger = PatternTagger()

    def tag(words: list[str]) -> list[str]:
        tagged = tagger.tag(" ".join(words), tokenize=False)
        if len(tagged) != len(words):
            raise ValueError(f"the tagger returned {len(tagged)} tags for {len(words)} tokens: {words}")
        return [tag for _, tag in tagged]

    return tag


@dataclass(frozen=True)
class Sentence:
    """A sentence's text, its words (each with the spans of its occurrences, in order of first occurrence) and
    each word's group at its first occurrence."""

    text: str
    spans: dict[str, list[tuple[int, int]]]
    groups: dict[str, str]


def analysed(text: str, tagger: Tagger) -> Sentence:
    """`text`'s words, their occurrences and their groups, the sentence tagged as a whole by `tagger`."""
    found = tokens(text)
    forms = [text[start:end] for start, end in found]
    tags = tagger(forms) if forms else []
    spans: dict[str, list[tuple[int, int]]] = {}
    groups: dict[str, str] = {}
    for form, span, tag in zip(forms, found, tags):
        if _HAS_WORD_CHARACTER.search(form):
            spans.setdefault(form, []).append(span)
            groups.setdefault(form, tag_group(tag, form))
    return Sentence(text, spans, groups)


@dataclass(frozen=True)
class RelevantWord:
    """A pair's most relevant word ŵ, its group, and how much its removal lowers the pair's similarity."""

    word: str
    group: str
    drop: float


def most_relevant_words(pairs: Sequence[tuple[str, str]], similarity: Similarity, tagger: Tagger,
                        batch_pairs: int = 256) -> list[RelevantWord | None]:
    """ŵ of each pair (the module docstring's formula), None for a pair with no word; `batch_pairs` pairs'
    texts go to `similarity` in one call."""
    return [word for word, _ in _analysed_pairs(pairs, similarity, tagger, batch_pairs)]


def _analysed_pairs(pairs: Sequence[tuple[str, str]], similarity: Similarity, tagger: Tagger,
                    batch_pairs: int = 256) -> list[tuple[RelevantWord | None, list[str]]]:
    """(ŵ, the groups of the pair's candidate words) of each pair."""
    found = []
    for start in range(0, len(pairs), batch_pairs):
        found += _batch(pairs[start:start + batch_pairs], similarity, tagger)
    return found


def _batch(pairs: Sequence[tuple[str, str]], similarity: Similarity,
           tagger: Tagger) -> list[tuple[RelevantWord | None, list[str]]]:
    sentences = [(analysed(a, tagger), analysed(b, tagger)) for a, b in pairs]
    firsts, seconds = [], []
    for a, b in sentences:
        firsts.append(a.text)
        seconds.append(b.text)
        for word in candidates(a, b):
            firsts += [without(a.text, a.spans.get(word, ())), a.text]
            seconds += [b.text, without(b.text, b.spans.get(word, ()))]
    scores = np.asarray(similarity(firsts, seconds), dtype=float)
    found, at = [], 0
    for a, b in sentences:
        words = candidates(a, b)
        groups = [a.groups.get(word) or b.groups[word] for word in words]
        whole, removed = scores[at], scores[at + 1: at + 1 + 2 * len(words)].reshape(-1, 2)
        at += 1 + 2 * len(words)
        if not words:
            found.append((None, groups))
            continue
        drops = whole - removed.min(axis=1)
        best = int(np.argmax(drops))  # the first of equal drops
        found.append((RelevantWord(words[best], groups[best], float(drops[best])), groups))
    return found


def candidates(a: Sentence, b: Sentence) -> list[str]:
    """Every word of a or b, a's in order, then b's not in a."""
    return list(a.spans) + [word for word in b.spans if word not in a.spans]


def distribution(groups: Sequence[str]) -> dict[str, float]:
    """{group: its share of `groups` in percent} for every group of `GROUPS`."""
    counts = Counter(groups)
    return {group: 100.0 * counts[group] / max(len(groups), 1) for group in GROUPS}


@dataclass(frozen=True)
class PosRelevance:
    """The analysis of a set of pairs: each pair's ŵ (None: a pair without words), the distribution of their
    groups and the prior (each in percent, over the pairs with words)."""

    words: list[RelevantWord | None]
    shares: dict[str, float]
    prior: dict[str, float]


def pos_relevance(pairs: Sequence[tuple[str, str]], similarity: Similarity, tagger: Tagger) -> PosRelevance:
    """The analysis of TSDAE §7.2 on `pairs` (the module docstring)."""
    analysed_pairs = _analysed_pairs(pairs, similarity, tagger)
    prior: Counter = Counter()
    for _, groups in analysed_pairs:
        for group in groups:
            prior[group] += 1.0 / len(groups)
    counted = [word for word, _ in analysed_pairs if word is not None]
    total = max(len(counted), 1)
    return PosRelevance([word for word, _ in analysed_pairs], distribution([word.group for word in counted]),
                        {group: 100.0 * prior[group] / total for group in GROUPS})
