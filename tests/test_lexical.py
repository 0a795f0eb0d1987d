"""Lexical baselines: BM25 equals rank-bm25 and a hand computation; TF-IDF equals scikit-learn's cosine;
the lexical scorers give the same scores through every task interface."""

import math
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from sentsweep.bm25_index import Bm25Index, lexical_tokens
from sentsweep.data import read_corpus, read_sts_benchmark_file
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.scorers import Bm25Scorer, TfidfScorer
from sentsweep.trainables.catalog import train
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
    assert report["sts_test_at_best_dev"] == pytest.approx(100 * spearmanr(ours, pairs.scores).statistic)


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
    from sentsweep.errors import InputError
    from sentsweep.trainables.catalog import validate_config as validate

    with pytest.raises(InputError, match="no sentence vectors for the transfer task\\(s\\) mr"):
        validate(tsdae_config | {"method": "bm25", "eval_tasks": {"mr": "/data/MR", "askubuntu": "/data/au"}})
