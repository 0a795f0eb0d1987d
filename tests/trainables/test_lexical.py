"""Lexical baselines: BM25 equals rank-bm25 and a hand computation, in each variant (okapi, Lucene, Pyserini);
TF-IDF equals scikit-learn's cosine and a hand computation with max_features; BM25 + alpha x cosine (Wang 2022 eq. 5.1)
equals its sum by hand; the lexical scorers give the same scores through every task interface."""

import math
import random
import re

import numpy as np
import pytest
import torch
from rank_bm25 import BM25Okapi
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from sentsweep.bm25_index import BM25_VARIANTS, Bm25Index, lexical_tokens
from sentsweep.data import read_corpus, read_sts_benchmark_file
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.models import load_sentence_model
from sentsweep.scorers import Bm25DenseScorer, Bm25Scorer, EmbeddingScorer, TfidfScorer
from sentsweep.trainables.catalog import train, validate_config
from sentsweep.trainables.session import LocalSession


def test_bm25_by_hand():
    documents = [["cat", "sat"], ["dog", "sat", "sat"], ["cat", "cat", "dog", "ran"]]
    index = Bm25Index(documents, k1=1.5, b=0.75, epsilon=0.25)
    n, avgdl = 3, 3.0
    idf = {t: math.log(n - df + 0.5) - math.log(df + 0.5) for t, df in {"cat": 2, "sat": 2, "dog": 2, "ran": 1}.items()}
    floor = 0.25 * sum(idf.values()) / 4  # cat/sat/dog have negative idf: floored at epsilon x mean idf
    idf = {t: (floor if v < 0 else v) for t, v in idf.items()}

    def term(t, tf, length):
        return idf[t] * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * length / avgdl))

    expected = [term("cat", 1, 2), 0.0, term("cat", 2, 4) + term("ran", 1, 4)]
    assert index.get_scores(["cat", "ran", "unknown"]) == pytest.approx(expected, rel=1e-12)


def test_bm25_matches_rank_bm25_on_a_random_corpus():
    rng = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    documents = [[rng.choice(words[: rng.randint(5, 300)]) for _ in range(rng.randint(1, 30))] for _ in range(500)]
    queries = [[rng.choice(words) for _ in range(rng.randint(1, 6))] for _ in range(40)]
    ours, reference = Bm25Index(documents), BM25Okapi(documents)
    for query in queries:
        assert ours.get_scores(query) == pytest.approx(reference.get_scores(query), rel=1e-9, abs=1e-12)
    scores, indices = ours.top_k(queries, k=5, batch_size=16)
    for query, top_scores, top_indices in zip(queries, scores, indices):
        full = reference.get_scores(query)
        assert top_scores == pytest.approx(np.sort(full)[::-1][:5], rel=1e-9)
        assert full[top_indices] == pytest.approx(top_scores, rel=1e-9)


def test_tfidf_similarity_equals_scikit_learn_cosine():
    corpus = read_corpus(CORPUS_FILE)
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-dev.csv")
    ours = TfidfScorer(corpus).pair_similarities(pairs.sentences1, pairs.sentences2)
    vectorizer = TfidfVectorizer(tokenizer=lexical_tokens, lowercase=False, token_pattern=None).fit(corpus)
    expected = [cosine_similarity(vectorizer.transform([a]), vectorizer.transform([b]))[0, 0]
                for a, b in zip(pairs.sentences1, pairs.sentences2)]
    assert ours == pytest.approx(expected, abs=1e-12)


def test_tfidf_method_reports_spearman_of_its_similarities(tsdae_config):
    session = LocalSession()
    train(tsdae_config | {"method": "tfidf"}, session)
    (report,) = session.reports
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    similarities = TfidfScorer(read_corpus(CORPUS_FILE)).pair_similarities(pairs.sentences1, pairs.sentences2)
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearmanr(similarities, pairs.scores).statistic)
    assert report["best_sts_dev"] == report["sts_dev"]


def test_bm25_method_scores_each_pair_with_rank_bm25_over_the_second_sentences(tsdae_config):
    session = LocalSession()
    train(tsdae_config | {"method": "bm25"}, session)
    (report,) = session.reports
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    documents = list(dict.fromkeys(pairs.sentences2))
    reference = BM25Okapi([lexical_tokens(d) for d in documents])
    expected = [reference.get_scores(lexical_tokens(a))[documents.index(b)]
                for a, b in zip(pairs.sentences1, pairs.sentences2)]
    ours = Bm25Scorer().pair_similarities(pairs.sentences1, pairs.sentences2)
    assert ours == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearman(np.array(expected), np.array(pairs.scores)))


@pytest.mark.parametrize("scorer", [TfidfScorer(), Bm25Scorer()], ids=["tfidf", "bm25"])
def test_lexical_candidate_and_top_k_scores_agree_with_the_full_score_matrix(scorer):
    corpus = read_corpus(CORPUS_FILE)[:60]
    queries = corpus[:5]
    if isinstance(scorer, TfidfScorer):
        vectors = TfidfVectorizer(tokenizer=lexical_tokens, lowercase=False, token_pattern=None).fit_transform(
            queries + corpus)
        full = cosine_similarity(vectors[:5], vectors[5:])
    else:
        reference = BM25Okapi([lexical_tokens(d) for d in corpus])
        full = np.array([reference.get_scores(lexical_tokens(q)) for q in queries])
    scores, indices = scorer.top_k(queries, corpus, 3)
    assert scores == pytest.approx(np.sort(full, axis=1)[:, ::-1][:, :3], rel=1e-9)
    assert np.take_along_axis(full, indices, axis=1) == pytest.approx(scores, rel=1e-9)
    if isinstance(scorer, Bm25Scorer):  # candidate lists share one index over their union: here the corpus
        per_query = scorer.candidate_similarities(queries, [corpus] * 5)
        assert np.vstack(per_query) == pytest.approx(full, rel=1e-9)


def test_bm25_with_a_transfer_task_is_refused_before_anything_runs(tsdae_config):
    with pytest.raises(InputError, match="no sentence vectors for the transfer task\\(s\\) mr"):
        validate_config(tsdae_config | {"method": "bm25", "eval_tasks": {"mr": "/data/MR", "askubuntu": "/data/au"}})


# --- BM25 variants: k1, b and Lucene's idf (TSDAE App. B, Wang 2022 §5.2.1)

TINY_CORPUS = [["cat", "sat"], ["dog", "sat", "sat"], ["cat", "cat", "dog", "ran"]]


def lucene_by_hand(query: list[str], documents: list[list[str]], k1: float, b: float) -> list[float]:
    """Lucene's BM25 written out: sum over the query's terms (a repeated one again) of
    ln(1 + (N - n + 0.5) / (n + 0.5)) * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)), divided by the constant
    k1 + 1 that Lucene 8 dropped (LUCENE-8563): the ranking is the textbook formula's."""
    n_docs, avgdl = len(documents), sum(map(len, documents)) / len(documents)
    scores = []
    for document in documents:
        total = 0.0
        for term in query:
            tf, df = document.count(term), sum(term in other for other in documents)
            if tf:
                idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(document) / avgdl))
        scores.append(total / (k1 + 1))
    return scores


@pytest.mark.parametrize("variant, k1, b", [("lucene", 1.2, 0.75), ("pyserini", 0.9, 0.4)])
def test_lucene_bm25_by_hand(variant, k1, b):
    assert (BM25_VARIANTS[variant].k1, BM25_VARIANTS[variant].b) == (k1, b)
    n, avgdl = 3, 3.0
    idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in {"cat": 2, "sat": 2, "dog": 2, "ran": 1}.items()}

    def term(t, tf, length):
        return idf[t] * tf / (tf + k1 * (1 - b + b * length / avgdl))

    # "cat" twice counts twice; "unknown" is in no document
    expected = [2 * term("cat", 1, 2), 0.0, 2 * term("cat", 2, 4) + term("ran", 1, 4)]
    scores = Bm25Index.of_variant(TINY_CORPUS, variant).get_scores(["cat", "ran", "unknown", "cat"])
    assert scores == pytest.approx(expected, rel=1e-12)
    assert scores == pytest.approx(lucene_by_hand(["cat", "ran", "unknown", "cat"], TINY_CORPUS, k1, b), rel=1e-12)


def test_given_k1_and_b_replace_the_variants_defaults():
    query = ["sat", "dog"]
    lucene = Bm25Index.of_variant(TINY_CORPUS, "lucene", k1=2.0, b=0.0).get_scores(query)
    assert lucene == pytest.approx(lucene_by_hand(query, TINY_CORPUS, 2.0, 0.0), rel=1e-12)
    rng = random.Random(1)
    documents = [[rng.choice("abcdefghij") for _ in range(rng.randint(1, 12))] for _ in range(50)]
    okapi = Bm25Index.of_variant(documents, "okapi", k1=0.9, b=0.3)
    reference = BM25Okapi(documents, k1=0.9, b=0.3)
    assert okapi.get_scores(["a", "c", "c"]) == pytest.approx(reference.get_scores(["a", "c", "c"]), rel=1e-9)


def sts_test_by_hand(k1: float, b: float) -> tuple[np.ndarray, list[float]]:
    """Lucene BM25 of each STS test pair (first sentence the query, the second sentences the index), gold scores."""
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    documents = list(dict.fromkeys(pairs.sentences2))
    tokens = [lexical_tokens(d) for d in documents]
    scores = np.array([lucene_by_hand(lexical_tokens(a), tokens, k1, b)[documents.index(d)]
                       for a, d in zip(pairs.sentences1, pairs.sentences2)])
    return scores, pairs.scores


def test_bm25_method_scores_with_its_variant_and_parameters(tsdae_config):
    session = LocalSession()
    train(tsdae_config | {"method": "bm25", "bm25_variant": "pyserini", "b": 0.9}, session)
    (report,) = session.reports
    expected, gold = sts_test_by_hand(k1=0.9, b=0.9)  # Pyserini's k1, the given b
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    ours = Bm25Scorer("pyserini", b=0.9).pair_similarities(pairs.sentences1, pairs.sentences2)
    assert ours == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # the project's Spearman (similarities rounded to 1e-6, so that equal scores tie whatever their last bits)
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearman(expected, np.asarray(gold)))


@pytest.mark.parametrize("extra, message", [
    ({"method": "bm25", "k1": -0.5}, "setting k1=-0.5 is out of range: must be >= 0"),
    ({"method": "bm25", "b": 1.5}, "setting b=1.5 is out of range: must be <= 1"),
    ({"method": "bm25", "bm25_variant": "lucen"}, "setting bm25_variant='lucen': expected one of 'okapi', 'lucene', "
                                                  "'pyserini'; did you mean 'lucene'?"),
    ({"method": "tfidf", "max_features": 0}, "setting max_features=0 is out of range: must be >= 1"),
    ({"method": "bm25_dense", "alpha": -1}, "setting alpha=-1 is out of range: must be >= 0"),
    ({"method": "bm25_dense", "rescore_depth": 0}, "setting rescore_depth=0 is out of range: must be >= 1"),
    ({"method": "bm25_dense", "model": "/no/such/model"}, "model path '/no/such/model' does not exist"),
    ({"method": "bm25_dense", "encoder_pooling": "avg"}, "setting encoder_pooling='avg': expected one of"),
])
def test_bad_lexical_settings_are_refused_before_anything_runs(tsdae_config, extra, message):
    with pytest.raises(InputError, match=re.escape(message)):
        validate_config(tsdae_config | extra)


def test_bm25_index_refuses_bad_parameters_naming_them():
    with pytest.raises(InputError, match=re.escape("BM25 b=2.0 is out of range: must be in [0, 1]")):
        Bm25Scorer("lucene", b=2.0)
    with pytest.raises(InputError, match="unknown BM25 variant 'elastic'; expected one of okapi, lucene, pyserini"):
        Bm25Scorer("elastic")


# --- TF-IDF with max_features (Malmberg 2021 §3.3.3)

def test_tfidf_max_features_keeps_the_most_frequent_terms_by_hand():
    corpus = ["the cat sat", "the dog sat", "the cat ran", "a bird flew"]
    # corpus counts: the 3, cat 2, sat 2, every other term 1: the top 3 are the, cat, sat
    n = len(corpus)
    idf = {t: math.log((1 + n) / (1 + df)) + 1 for t, df in {"the": 3, "cat": 2, "sat": 2}.items()}

    def vector(text):
        counts = {t: lexical_tokens(text).count(t) * idf[t] for t in idf}
        norm = math.sqrt(sum(v * v for v in counts.values()))
        return {t: v / norm for t, v in counts.items()} if norm else counts

    def cosine(a, b):
        return sum(vector(a)[t] * vector(b)[t] for t in idf)

    texts1, texts2 = ["the cat", "cat sat sat", "bird flew"], ["cat sat dog dog", "the sat", "a bird"]
    expected = [cosine(a, b) for a, b in zip(texts1, texts2)]
    assert expected[2] == 0.0  # no kept term: a zero vector
    assert TfidfScorer(corpus, max_features=3).pair_similarities(texts1, texts2) == pytest.approx(expected, abs=1e-12)
    full = TfidfScorer(corpus).pair_similarities(texts1, texts2)
    assert full[2] > 0 and not np.allclose(full, expected)


def test_tfidf_method_reads_max_features(tsdae_config):
    session = LocalSession()
    train(tsdae_config | {"method": "tfidf", "max_features": 40}, session)
    (report,) = session.reports
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    vectorizer = TfidfVectorizer(tokenizer=lexical_tokens, lowercase=False, token_pattern=None, max_features=40)
    vectorizer.fit(read_corpus(CORPUS_FILE))
    assert len(vectorizer.vocabulary_) == 40
    expected = [cosine_similarity(vectorizer.transform([a]), vectorizer.transform([b]))[0, 0]
                for a, b in zip(pairs.sentences1, pairs.sentences2)]
    ours = TfidfScorer(read_corpus(CORPUS_FILE), max_features=40).pair_similarities(pairs.sentences1,
                                                                                    pairs.sentences2)
    assert ours == pytest.approx(expected, abs=1e-12)
    assert not np.allclose(ours, TfidfScorer(read_corpus(CORPUS_FILE)).pair_similarities(pairs.sentences1,
                                                                                         pairs.sentences2))
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearman(np.array(expected), np.array(pairs.scores)))


# --- BM25 + alpha x cosine (Wang 2022 eq. 5.1, Table 5.8)

class FixedEncoder:
    """Sentence vectors given by hand; records what it was asked to embed."""

    def __init__(self, vectors: dict[str, tuple[float, ...]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return torch.tensor([self.vectors[text] for text in texts], dtype=torch.float32)


def cosine(u, v) -> float:
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_bm25_dense_pair_and_candidate_scores_are_bm25_plus_alpha_cosine_by_hand():
    vectors = {"cat sat": (1, 0), "dog ran": (0, 1), "cat sat on a mat": (1, 1), "a dog": (1, -2), "dog cat": (3, 1)}
    encoder = FixedEncoder(vectors)
    scorer = Bm25DenseScorer(encoder, alpha=2.5, variant="okapi")
    texts1, texts2 = ["cat sat", "dog ran", "dog ran"], ["cat sat on a mat", "a dog", "dog cat"]
    documents = list(dict.fromkeys(texts2))
    reference = BM25Okapi([lexical_tokens(d) for d in documents])
    expected = [reference.get_scores(lexical_tokens(a))[documents.index(b)] + 2.5 * cosine(vectors[a], vectors[b])
                for a, b in zip(texts1, texts2)]
    assert scorer.pair_similarities(texts1, texts2) == pytest.approx(expected, rel=1e-6)
    candidates = [["cat sat on a mat", "a dog"], ["a dog", "dog cat", "cat sat on a mat"]]
    union = list(dict.fromkeys(texts for row in candidates for texts in row))
    reference = BM25Okapi([lexical_tokens(d) for d in union])
    for query, row, scores in zip(["cat sat", "dog ran"], candidates, scorer.candidate_similarities(
            ["cat sat", "dog ran"], candidates)):
        bm25 = reference.get_scores(lexical_tokens(query))
        assert scores == pytest.approx([bm25[union.index(d)] + 2.5 * cosine(vectors[query], vectors[d]) for d in row],
                                       rel=1e-6)


def test_bm25_dense_top_k_rescores_only_bm25s_best_hits_by_hand():
    documents = ["cat cat cat", "cat dog", "cat bird fish", "dog bird", "fish"]
    vectors = {"cat": (1, 0), "cat cat cat": (-1, 0), "cat dog": (1, 0), "cat bird fish": (1, 0), "dog bird": (1, 0),
               "fish": (0, 1)}
    tokens = [lexical_tokens(d) for d in documents]
    bm25 = lucene_by_hand(["cat"], tokens, 1.2, 0.75)
    assert bm25[0] > bm25[1] > bm25[2] > 0 == bm25[3] == bm25[4]  # the hits: documents 0, 1, 2

    encoder = FixedEncoder(vectors)
    scores, indices = Bm25DenseScorer(encoder, alpha=10, rescore_depth=2, variant="lucene").top_k(
        ["cat"], documents, 5)
    # rescored: BM25's two best hits, 0 (cosine -1) and 1 (cosine 1); then 2 (a hit beyond the depth) and the
    # non-hits 3, 4 in BM25 order, at bm25 - alpha capped at the lowest rescored score
    rescored = [bm25[1] + 10, bm25[0] - 10]
    assert indices.tolist() == [[1, 0, 2, 3, 4]]
    assert scores[0] == pytest.approx(rescored + [min(bm25[2] - 10, rescored[1]), -10, -10], rel=1e-9)
    assert encoder.calls == [["cat", "cat cat cat", "cat dog"]]  # the query and the rescored documents only

    scores, indices = Bm25DenseScorer(FixedEncoder(vectors), alpha=10, rescore_depth=None, variant="lucene").top_k(
        ["cat"], documents, 4)
    # every hit rescored; document 3 (cosine 1, no shared term) is no hit, so it stays below them
    assert indices.tolist() == [[1, 2, 0, 3]]
    assert scores[0][:3] == pytest.approx([bm25[1] + 10, bm25[2] + 10, bm25[0] - 10], rel=1e-9)

    alone = FixedEncoder(vectors)
    scores, indices = Bm25DenseScorer(alone, alpha=0, variant="lucene").top_k(["cat"], documents, 3)
    assert indices.tolist() == [[0, 1, 2]] and scores[0] == pytest.approx(bm25[:3], rel=1e-9)
    assert alone.calls == []  # alpha = 0 is BM25 alone: nothing embedded


@pytest.mark.slow  # a real training run of seconds or more
def test_bm25_dense_method_reports_pyserini_bm25_plus_alpha_cosine(tsdae_config, tiny_model_dir):
    session = LocalSession()
    train(tsdae_config | {"method": "bm25_dense", "alpha": 3.0, "encoder_pooling": "mean"}, session)
    (report,) = session.reports
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    model = load_sentence_model(str(tiny_model_dir), "mean", 128)
    first, second = model.encode(pairs.sentences1), model.encode(pairs.sentences2)
    cosines = [cosine(u, v) for u, v in zip(first, second)]
    bm25, gold = sts_test_by_hand(k1=0.9, b=0.4)  # bm25_dense's default variant: Pyserini's (Wang 2022 §5.2.1)
    expected = bm25 + 3.0 * np.array(cosines)
    ours = Bm25DenseScorer(EmbeddingScorer(model), 3.0, variant="pyserini").pair_similarities(
        pairs.sentences1, pairs.sentences2)
    assert ours == pytest.approx(expected, abs=1e-5)
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearman(expected, np.asarray(gold)))


# --- TF-IDF with lemmatisation (Malmberg 2021 §3.3.3)

def test_lemmatized_tfidf_gives_inflected_forms_one_term():
    """Malmberg 2021 §3.3.3: "the word "walk" and "walking" receive the same embedding following lemmatization"."""
    corpus = ["he walks home", "she walked away", "walking is good", "cars drive fast"]
    plain = TfidfScorer(corpus).pair_similarities(["walking"], ["walk"])
    lemmatized = TfidfScorer(corpus, lemmatize=True).pair_similarities(["walking", "cars"], ["walk", "car"])
    assert plain[0] == 0.0
    assert lemmatized == pytest.approx([1.0, 1.0])


def test_tfidf_method_reads_lemmatize(tsdae_config):
    session = LocalSession()
    train(tsdae_config | {"method": "tfidf", "lemmatize": True}, session)
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")
    ours = TfidfScorer(read_corpus(CORPUS_FILE), lemmatize=True).pair_similarities(pairs.sentences1, pairs.sentences2)
    assert session.reports[-1]["sts_test_at_best_dev"] == pytest.approx(100 * spearman(ours, pairs.scores), abs=1e-9)
