"""Supervised and semi-supervised stages on the tiny model: teachers learn, the Cross-Bi-Encoder scores as
defined, silver sampling picks what it should, GPL's MarginMSE decreases, bad generators are named."""

import random

import numpy as np
import pytest
import torch
from rank_bm25 import BM25Okapi
from scipy import stats
from sklearn.metrics import f1_score

from sentsweep.bm25_index import lexical_tokens
from sentsweep.data import ScoredPairs, read_corpus
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.pair_models import CrossBiEncoder, build_teacher
from sentsweep.sampling import bm25_pairs, iterative_kde
from sentsweep.trainables.catalog import resolve_trial, train, validate_config
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.teachers import protected_mask, teacher_spearman, train_teacher

ANIMALS = ("dog", "puppy", "cat", "kitten")


def animal_pairs(n: int, seed: int) -> ScoredPairs:
    """Toy gold: 5 when both sentences are about an animal, else 0 (half of the pairs each)."""
    corpus = read_corpus(CORPUS_FILE)
    animal = [c for c in corpus if any(w in c.lower().split() for w in ANIMALS)]
    other = [c for c in corpus if c not in animal]
    rng = random.Random(seed)
    first, second, scores = [], [], []
    for i in range(n):
        a, b = rng.sample(animal, 2) if i % 2 else (rng.choice(other), rng.choice(corpus))
        first.append(a)
        second.append(b)
        scores.append(5.0 if i % 2 or any(w in b.lower().split() for w in ANIMALS) and a in animal else 0.0)
    return ScoredPairs(first, second, scores, "toy")


@pytest.mark.parametrize("kind", ["ce", "cbe"])
def test_teacher_scores_correlate_with_gold_after_training(tiny_model_dir, kind):
    train_pairs, held_out = animal_pairs(200, 0), animal_pairs(100, 1)
    torch.manual_seed(0)
    teacher = build_teacher(kind, str(tiny_model_dir), 32)
    before = teacher_spearman(teacher, held_out)
    losses = train_teacher(teacher, train_pairs, 5.0, epochs=5, batch_size=16, lr=3e-3, seed=0)
    after = teacher_spearman(teacher, held_out)
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    assert before < 40 < 70 < after, (before, after)


def test_cross_bi_encoder_is_the_cosine_of_the_two_span_means(tiny_model_dir):
    cbe = CrossBiEncoder(str(tiny_model_dir), 32).eval()
    first, second = ["a cat is eating", "a man plays"], ["a dog eats an apple", "a guy plays a guitar"]
    features = cbe.encode_pairs(first, second)
    tokens = cbe.tokenizer.convert_ids_to_tokens(features["input_ids"][0].tolist())
    assert tokens[: tokens.index("[SEP]") + 2][-1] == "[CLS]"  # "[CLS] x1 [SEP] [CLS] x2 [SEP]"
    assert tokens.count("[CLS]") == 2 and tokens.count("[SEP]") == 2
    with torch.no_grad():
        hidden = cbe.encoder(input_ids=features["input_ids"], attention_mask=features["attention_mask"],
                             token_type_ids=features["token_type_ids"]).last_hidden_state
        expected = []
        for row in range(2):
            ids = features["input_ids"][row].tolist()
            sep1 = ids.index(cbe.tokenizer.sep_token_id)
            sep2 = ids.index(cbe.tokenizer.sep_token_id, sep1 + 1)
            u, v = hidden[row, : sep1 + 1].mean(0), hidden[row, sep1 + 1: sep2 + 1].mean(0)
            expected.append(torch.nn.functional.cosine_similarity(u, v, dim=0).item())
    assert cbe.predict(first, second) == pytest.approx(expected, abs=1e-6)
    assert all(-1 <= s <= 1 for s in cbe.predict(first, second))


def test_bm25_sampling_pairs_each_sentence_with_its_lexically_closest_others():
    sentences = read_corpus(CORPUS_FILE)[:80]
    pairs = set(bm25_pairs(sentences, top_k=2))
    reference = BM25Okapi([lexical_tokens(s) for s in sentences])
    for i, sentence in enumerate(sentences):
        scores = reference.get_scores(lexical_tokens(sentence))
        scores[i] = -np.inf
        best = np.sort(scores)[::-1][:2]
        chosen = [j for j in range(len(sentences)) if (min(i, j), max(i, j)) in pairs]
        # the two best other sentences (by score: ties may pick either) are paired with it
        assert sum(scores[j] >= best[1] - 1e-9 for j in chosen) >= 2
    assert all(i < j for i, j in pairs)


def test_iterative_kde_moves_the_silver_distribution_to_the_gold_one():
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 1, 300)
    candidates = np.concatenate([rng.normal(0.05, 0.03, 900), rng.uniform(0, 1, 300)])  # mostly negatives
    kept = iterative_kde(gold, candidates, random.Random(0))
    assert len(set(kept)) == len(kept) and 2 < len(kept) < len(candidates)
    before = stats.ks_2samp(gold, candidates).statistic
    after = stats.ks_2samp(gold, candidates[kept]).statistic
    assert after < before / 2, (before, after)


def test_topic_prompt_tokens_are_never_masked():
    # [CLS]=2 t t ¥=9 x x [SEP]=3 [CLS]=2 t ¥=9 x [SEP]=3
    ids = [2, 50, 51, 9, 60, 61, 3, 2, 52, 9, 62, 3]
    assert protected_mask(ids, [9], cls_id=2, special_ids=[0, 1, 2, 3, 4]) == [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1]


def base_config(tiny_model_dir) -> dict:
    return dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                test_file=str(DEMO_DIR / "sts-test.csv"), train_file=str(DEMO_DIR / "sts-train.csv"),
                eval_format="stsb", lr=1e-3, batch_size=16, max_steps=30, eval_steps=10, max_seq_length=32, seed=0,
                teacher_epochs=1, teacher_lr=3e-3)


def test_sbert_trains_on_exactly_the_sampled_gold_pairs_and_its_loss_decreases(tiny_model_dir):
    session = LocalSession()
    train(base_config(tiny_model_dir) | {"method": "sbert", "sample_size": 64}, session)
    assert session.reports[-1]["gold_pairs"] == 64
    losses = [r["train_loss"] for r in session.reports[1:]]
    assert losses[-1] < losses[0]


def test_augsbert_with_reannotated_gold_distils_the_teachers_scores(tiny_model_dir, monkeypatch):
    import sentsweep.trainables.supervised as supervised

    seen = {}
    original = supervised.cosine_similarity_setup

    def spy(model, examples, metrics=None):
        seen["examples"] = examples
        return original(model, examples, metrics)

    monkeypatch.setattr(supervised, "cosine_similarity_setup", spy)
    config = base_config(tiny_model_dir) | {"method": "augsbert", "teacher": "cbe", "sampling": "bm25",
                                            "reannotate_gold": True, "sample_size": 40, "max_steps": 10}
    session = LocalSession()
    train(config, session)
    report = session.reports[-1]
    assert report["gold_pairs"] == 40 and report["silver_pairs"] > 0
    assert len(seen["examples"]) == 40 + report["silver_pairs"]
    gold = supervised.gold_pairs(resolve_trial(config | {"seed": 0}))
    reannotated = seen["examples"][:40]
    assert [(a, b) for a, b, _ in reannotated] == list(zip(gold.sentences1, gold.sentences2))
    labels = np.array([label for _, _, label in reannotated])
    assert np.all(np.abs(labels) <= 1) and not np.allclose(labels, np.array(gold.scores) / 5)  # CBE cosines


def test_gpl_margin_mse_loss_decreases(tiny_model_dir, tmp_path):
    from sentsweep.models import build_tiny_seq2seq

    generator = build_tiny_seq2seq(tmp_path / "t5", tiny_model_dir)
    session = LocalSession()
    config = base_config(tiny_model_dir) | {"method": "gpl", "generator": str(generator), "sample_size": 60,
                                            "queries_per_passage": 2, "negatives_top_k": 5, "max_steps": 40}
    train(config, session)
    losses = [r["train_loss"] for r in session.reports[1:]]
    assert session.reports[-1]["gpl_queries"] == 120
    assert losses[-1] < losses[0]


def test_an_unloadable_generator_is_named_with_how_to_give_a_local_folder(tiny_model_dir, tmp_path):
    validate = validate_config
    missing = tmp_path / "no-such-t5"
    with pytest.raises(InputError, match=r"query-generation model .*no-such-t5.*does not exist.*--set generator="):
        validate(base_config(tiny_model_dir) | {"method": "gpl", "generator": str(missing)})
    not_a_model = tmp_path / "empty"
    not_a_model.mkdir()
    with pytest.raises(InputError, match=r"query-generation model .*empty.*--set generator=/path/to/t5-query-gen"):
        validate(base_config(tiny_model_dir) | {"method": "gpl", "generator": str(not_a_model)})


def test_topic_classification_task_reports_f1_macro_of_a_frozen_encoder(tmp_path):
    from sentsweep.tasks import build_task

    class WordFeatures:
        def features(self, texts):
            return np.array([[("cat" in t) * 1.0, ("car" in t) * 1.0] for t in texts])

    def lines(n):
        return "".join(f"{'pets' if i % 3 else 'cars'}\t{'a cat' if i % 3 else 'a car'} {i}\n" for i in range(n))

    (tmp_path / "train.tsv").write_text(lines(30), encoding="utf-8")
    (tmp_path / "test.tsv").write_text(lines(9) + "pets\ta car by mistake\n", encoding="utf-8")
    result = build_task("topics", str(tmp_path)).evaluate(WordFeatures(), "test")
    gold = ["pets" if i % 3 else "cars" for i in range(9)] + ["pets"]
    predicted = ["pets" if i % 3 else "cars" for i in range(9)] + ["cars"]
    assert result.metrics["topics_f1_macro"] == pytest.approx(100 * f1_score(gold, predicted, average="macro"))


@pytest.mark.parametrize("prompt", ["shown", "hidden"])
def test_topic_prompts_reach_the_teacher_and_the_student_only_when_shown(tiny_model_dir, tmp_path, monkeypatch, prompt):
    import sentsweep.trainables.supervised as supervised
    from sentsweep.topics import TOPIC_DELIMITER

    corpus = read_corpus(CORPUS_FILE)[:40]
    topic_file = tmp_path / "topics.tsv"
    topic_file.write_text("".join(f"{'animals' if 'cat' in s or 'dog' in s else 'other'}\t{s}\n" for s in corpus),
                          encoding="utf-8")
    seen = {}
    original = supervised.cosine_similarity_setup
    monkeypatch.setattr(supervised, "cosine_similarity_setup",
                        lambda model, examples, metrics=None: seen.setdefault(
                            "setup", original(model, examples, metrics)))
    original_predict = {}

    def spy_teacher(kind, source, max_length, device):
        teacher = build_teacher(kind, source, max_length, device)
        predict = teacher.predict
        teacher.predict = lambda a, b, **kw: (
            original_predict.setdefault("texts", []).extend(a + b) or predict(a, b, **kw))
        return teacher

    monkeypatch.setattr(supervised, "build_teacher", spy_teacher)
    config = base_config(tiny_model_dir) | {"method": "augsbert", "setting": "domain", "topic_corpus": str(topic_file),
                                            "topic_prompt": prompt, "domain_mlm_steps": 2, "max_steps": 2}
    train(config, LocalSession())
    silver = seen["setup"].examples
    assert silver and all(TOPIC_DELIMITER in text for text in original_predict["texts"][-2 * len(silver):])
    assert all((TOPIC_DELIMITER in a) == (prompt == "shown") for a, _, _ in silver)
