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
from sentsweep.scorers import EmbeddingScorer
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


@pytest.mark.slow  # a real training run of seconds or more
@pytest.mark.parametrize("kind", ["ce", "cbe"])
def test_teacher_scores_correlate_with_gold_after_training(tiny_model_dir, kind):
    train_pairs, held_out = animal_pairs(200, 0), animal_pairs(100, 1)
    torch.manual_seed(0)
    teacher = build_teacher(kind, str(tiny_model_dir), 32)
    before = teacher_spearman(teacher, held_out)
    losses = train_teacher(teacher, train_pairs, 5.0, epochs=5, batch_size=16, lr=3e-3, seed=0).losses
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


@pytest.mark.slow  # a real training run of seconds or more
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


@pytest.mark.slow  # a real training run of seconds or more
def test_sbert_trains_on_exactly_the_sampled_gold_pairs_and_its_loss_decreases(tiny_model_dir):
    session = LocalSession()
    train(base_config(tiny_model_dir) | {"method": "sbert", "sample_size": 64}, session)
    assert session.reports[-1]["gold_pairs"] == 64
    losses = [r["train_loss"] for r in session.reports[1:]]
    assert losses[-1] < losses[0]


@pytest.mark.slow  # a real training run of seconds or more
def test_augsbert_with_reannotated_gold_distils_the_teachers_scores(tiny_model_dir, monkeypatch):
    import sentsweep.trainables.augsbert as augsbert

    seen = {}
    original = augsbert.cosine_similarity_setup

    def spy(model, examples, metrics=None):
        seen["examples"] = examples
        return original(model, examples, metrics)

    monkeypatch.setattr(augsbert, "cosine_similarity_setup", spy)
    config = base_config(tiny_model_dir) | {"method": "augsbert", "teacher": "cbe", "sampling": "bm25",
                                            "reannotate_gold": True, "sample_size": 40, "max_steps": 10}
    session = LocalSession()
    train(config, session)
    report = session.reports[-1]
    assert report["gold_pairs"] == 40 and report["silver_pairs"] > 0
    assert len(seen["examples"]) == 40 + report["silver_pairs"]
    gold = augsbert.gold_pairs(resolve_trial(config | {"seed": 0}))
    reannotated = seen["examples"][:40]
    assert [(a, b) for a, b, _ in reannotated] == list(zip(gold.sentences1, gold.sentences2))
    labels = np.array([label for _, _, label in reannotated])
    assert np.all(np.abs(labels) <= 1) and not np.allclose(labels, np.array(gold.scores) / 5)  # CBE cosines


@pytest.mark.slow  # a real training run of seconds or more
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


@pytest.mark.slow  # a real training run of seconds or more
@pytest.mark.parametrize("prompt", ["shown", "hidden"])
def test_topic_prompts_reach_the_teacher_and_the_student_only_when_shown(tiny_model_dir, tmp_path, monkeypatch, prompt):
    import sentsweep.trainables.augsbert as augsbert
    from sentsweep.topics import TOPIC_DELIMITER

    corpus = read_corpus(CORPUS_FILE)[:40]
    topic_file = tmp_path / "topics.tsv"
    topic_file.write_text("".join(f"{'animals' if 'cat' in s or 'dog' in s else 'other'}\t{s}\n" for s in corpus),
                          encoding="utf-8")
    seen = {}
    original = augsbert.cosine_similarity_setup
    monkeypatch.setattr(augsbert, "cosine_similarity_setup",
                        lambda model, examples, metrics=None: seen.setdefault(
                            "setup", original(model, examples, metrics)))
    original_predict = {}

    def spy_teacher(kind, source, max_length, device, *activation):
        teacher = build_teacher(kind, source, max_length, device, *activation)
        predict = teacher.predict
        teacher.predict = lambda a, b, **kw: (
            original_predict.setdefault("texts", []).extend(a + b) or predict(a, b, **kw))
        return teacher

    monkeypatch.setattr(augsbert, "build_teacher", spy_teacher)
    config = base_config(tiny_model_dir) | {"method": "augsbert", "setting": "domain", "topic_corpus": str(topic_file),
                                            "topic_prompt": prompt, "domain_mlm_steps": 2, "max_steps": 2}
    train(config, LocalSession())
    silver = seen["setup"].examples
    assert silver and all(TOPIC_DELIMITER in text for text in original_predict["texts"][-2 * len(silver):])
    assert all((TOPIC_DELIMITER in a) == (prompt == "shown") for a, _, _ in silver)


# --- the teacher: best epoch on dev, activations, Pearson (Reiml (2023) §5.1, §4.1.2, Tables 6.1-6.3) ---


def inverted(pairs: ScoredPairs) -> ScoredPairs:
    """The pairs with gold 5 - score: a teacher that learns the true scores gets worse on them."""
    return ScoredPairs(pairs.sentences1, pairs.sentences2, [5.0 - s for s in pairs.scores], "inverted")


@pytest.mark.parametrize("kind", ["ce", "cbe"])
def test_teacher_keeps_the_weights_of_its_best_epoch_on_dev(tiny_model_dir, kind, monkeypatch):
    import sentsweep.trainables.teachers as teachers

    train_pairs, probe = animal_pairs(160, 0), animal_pairs(40, 2)
    dev = inverted(animal_pairs(60, 1))  # the first epoch is the best on it, the last one is not
    after_each_epoch = []
    original = teachers.teacher_spearman

    def spy(teacher, pairs):  # called once after every epoch: keep what the teacher predicts then
        after_each_epoch.append(teacher.predict(probe.sentences1, probe.sentences2))
        return original(teacher, pairs)

    monkeypatch.setattr(teachers, "teacher_spearman", spy)
    torch.manual_seed(0)
    teacher = build_teacher(kind, str(tiny_model_dir), 32)
    fit = train_teacher(teacher, train_pairs, 5.0, epochs=4, batch_size=16, lr=3e-3, seed=0, dev=dev)
    assert len(fit.dev_scores) == len(after_each_epoch) == 4
    best = int(np.argmax(fit.dev_scores))  # np.argmax takes the first of equal maxima, as the teacher does
    assert fit.best_epoch == best + 1 < 4, fit.dev_scores
    final = teacher.predict(probe.sentences1, probe.sentences2)
    assert final == pytest.approx(after_each_epoch[best], abs=1e-6)
    assert not np.allclose(final, after_each_epoch[-1], atol=1e-4)
    assert original(teacher, dev) == pytest.approx(fit.dev_scores[best], abs=1e-6)

    torch.manual_seed(0)
    last = build_teacher(kind, str(tiny_model_dir), 32)
    fit_last = train_teacher(last, train_pairs, 5.0, epochs=4, batch_size=16, lr=3e-3, seed=0)
    assert fit_last.best_epoch == 4 and fit_last.dev_scores == []
    assert last.predict(probe.sentences1, probe.sentences2) == pytest.approx(after_each_epoch[-1], abs=1e-6)


def test_cross_encoder_activation_changes_pearson_not_spearman(tiny_model_dir):
    from sentsweep.trainables.teachers import teacher_correlations

    torch.manual_seed(0)
    teacher = build_teacher("ce", str(tiny_model_dir), 32)
    train_teacher(teacher, animal_pairs(160, 0), 5.0, epochs=2, batch_size=16, lr=3e-3, seed=0)
    test = animal_pairs(80, 3)
    logits = teacher.predict(test.sentences1, test.sentences2, logits=True)
    # sentence-transformers' own prediction applies its default sigmoid: the teacher's sigmoid scores equal it
    own = teacher.model.predict(list(zip(test.sentences1, test.sentences2)), show_progress_bar=False)
    expected = {"sigmoid": 1 / (1 + np.exp(-logits)), "none": logits, "tanh": np.tanh(logits)}
    assert expected["sigmoid"] == pytest.approx(np.asarray(own, float).ravel(), abs=1e-6)
    raw_spearmans, pearsons = set(), {}
    for activation, scores in expected.items():
        teacher.activation = activation
        predicted, spearman, pearsons[activation] = teacher_correlations(teacher, test)
        assert predicted == pytest.approx(scores, abs=1e-9)
        # the project ranks scores rounded to 1e-6 (sentsweep.encoding.rounded_similarities)
        assert spearman == pytest.approx(100 * stats.spearmanr(np.round(predicted, 6), test.scores).statistic,
                                         abs=1e-9)
        assert pearsons[activation] == pytest.approx(100 * stats.pearsonr(predicted, test.scores).statistic, abs=1e-9)
        raw_spearmans.add(round(stats.spearmanr(predicted, test.scores).statistic, 12))
    # Table 6.2: one trained model through three monotonic maps: the same ranks, three Pearson values
    assert len(raw_spearmans) == 1
    assert len({round(p, 6) for p in pearsons.values()}) == 3


def test_an_unknown_activation_is_refused_before_training(tiny_model_dir):
    with pytest.raises(InputError, match=r"teacher_activation='relu': expected one of 'sigmoid', 'none', 'tanh'"):
        validate_config(base_config(tiny_model_dir) | {"method": "augsbert", "teacher_activation": "relu"})


class RecordingSession(LocalSession):
    """A LocalSession that also calls `on_report(metrics)` at each report (to compute what a report should say
    from the models as they are at that moment)."""

    def __init__(self, on_report):
        super().__init__()
        self.on_report = on_report

    def report(self, metrics, checkpoint_dir):
        self.on_report(metrics)
        super().report(metrics, checkpoint_dir)


@pytest.mark.slow  # a real training run of seconds or more
def test_augsbert_reports_teacher_scores_agreement_and_silver_scores(tiny_model_dir, monkeypatch):
    """Tables 6.1-6.3 metrics against scipy on the teacher's own predictions; the teacher-student Spearman
    against an independent encoding of the dev-selected student; the silver scores artifact against what the
    student was given; the KDE's candidates are the semantic + random pairs."""
    import sentsweep.trainables.augsbert as augsbert
    from sentsweep.data import read_scored_pairs
    from sentsweep.demo_data import DEMO_DIR

    seen = {}
    original_setup, original_teacher = augsbert.cosine_similarity_setup, augsbert.build_teacher
    original_candidates = augsbert.silver_candidates

    def setup_spy(model, examples, metrics=None):
        seen["model"], seen["examples"] = model, examples
        return original_setup(model, examples, metrics)

    monkeypatch.setattr(augsbert, "cosine_similarity_setup", setup_spy)
    monkeypatch.setattr(augsbert, "build_teacher", lambda *a: seen.setdefault("teacher", original_teacher(*a)))
    monkeypatch.setattr(augsbert, "silver_candidates",
                        lambda trial, sentences, rng: seen.setdefault("candidates", original_candidates(
                            trial, sentences, rng)))
    test = read_scored_pairs(DEMO_DIR / "sts-test.csv")
    independent = []

    def on_report(metrics):
        if metrics["step"] == metrics["best_step"]:  # the student as the dev-selected checkpoint is now
            student = seen["model"]
            u, v = (student.encode(texts, convert_to_numpy=True) for texts in (test.sentences1, test.sentences2))
            cosines = np.sum(u * v, 1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)
            teacher_scores = seen["teacher"].predict(test.sentences1, test.sentences2)
            independent.append((metrics["step"], stats.spearmanr(np.round(cosines, 6), teacher_scores).statistic))

    config = base_config(tiny_model_dir) | {"method": "augsbert", "teacher": "ce", "sampling": "kde",
                                            "sample_size": 60, "max_steps": 4, "eval_steps": 2, "top_k": 2,
                                            "random_pairs_per_sentence": 2, "teacher_epochs": 2}
    session = RecordingSession(on_report)
    train(config, session)
    reports = session.reports
    teacher = seen["teacher"]

    # the teacher's test Spearman and Pearson, against scipy on its predictions
    predicted = teacher.predict(test.sentences1, test.sentences2)
    last = reports[-1]
    assert last["teacher_sts_test"] == pytest.approx(
        100 * stats.spearmanr(np.round(predicted, 6), test.scores).statistic, abs=1e-6)
    assert last["teacher_sts_test_pearson"] == pytest.approx(100 * stats.pearsonr(predicted, test.scores).statistic,
                                                             abs=1e-6)
    assert last["teacher_best_epoch"] in (1, 2)
    # the teacher-student Spearman: measured when dev improves, carried otherwise
    assert independent and independent[0][0] == 0
    by_step = dict(independent)
    value = None
    for report in reports:
        value = 100 * by_step[report["step"]] if report["step"] in by_step else value
        assert report["teacher_student_spearman_at_best_dev"] == pytest.approx(value, abs=1e-6)
    # the KDE's candidates: each sentence's 2 semantic neighbours and 2 random partners
    trial = resolve_trial(config)
    sentences = list(dict.fromkeys(augsbert.gold_pairs(trial).sentences1 + augsbert.gold_pairs(trial).sentences2))
    expected = augsbert.semantic_random_pairs(EmbeddingScorer(augsbert.semantic_retriever(trial)), sentences, 2, 2,
                                                random.Random(0))
    assert seen["candidates"] == expected
    # the silver scores artifact, with the first report only; the student's silver labels are its "silver"
    artifact = reports[0]["artifacts"]["silver_scores.json"]
    assert all("artifacts" not in report for report in reports[1:])
    gold = augsbert.gold_pairs(trial)
    assert artifact["gold"] == pytest.approx([s / 5 for s in gold.scores], abs=1e-6)
    assert len(artifact["candidates"]) == len(expected) > len(artifact["silver"]) == last["silver_pairs"]
    assert artifact["silver"] == pytest.approx([label for _, _, label in seen["examples"][60:]], abs=1e-6)
    reannotated = teacher.predict(gold.sentences1, gold.sentences2)  # reannotate_gold is on by default
    assert artifact["reannotated"] == pytest.approx(reannotated, abs=1e-6)
    assert [label for _, _, label in seen["examples"][:60]] == pytest.approx(reannotated, abs=1e-6)


class VectorScorer:
    """Exact cosine top-k over fixed vectors, one per text (an independent stand-in for an embedding model)."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors

    def top_k(self, queries, documents, k):
        q = np.array([self.vectors[t] for t in queries])
        d = np.array([self.vectors[t] for t in documents])
        q, d = q / np.linalg.norm(q, axis=1, keepdims=True), d / np.linalg.norm(d, axis=1, keepdims=True)
        scores = q @ d.T
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(scores, order, 1), order


def test_semantic_random_pairs_give_each_sentence_its_neighbours_and_random_others():
    """Reiml 2023 §5.6.1: per sentence 2 positive pairs from semantic search and 2 negative pairs from random search."""
    from sentsweep.sampling import semantic_random_pairs

    rng = np.random.default_rng(0)
    sentences = [f"sentence {i}" for i in range(30)]
    scorer = VectorScorer({s: rng.normal(size=8) for s in sentences})
    pairs = semantic_random_pairs(scorer, sentences, 2, 2, random.Random(5))
    assert pairs == semantic_random_pairs(scorer, sentences, 2, 2, random.Random(5))  # seeded
    assert pairs != semantic_random_pairs(scorer, sentences, 2, 2, random.Random(6))
    assert len(set(pairs)) == len(pairs) and all(i < j for i, j in pairs)
    vectors = np.array([scorer.vectors[s] for s in sentences])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    partners = {i: {j for a, b in pairs for j in (a, b) if i in (a, b) and j != i} for i in range(30)}
    for i in range(30):
        neighbours = set(np.argsort(-similarity[i])[:2].tolist())
        assert neighbours <= partners[i]
        # its own random draws are 2 sentences that are neither itself nor its neighbours (pairs from
        # other sentences' draws add to them)
        assert len(partners[i] - neighbours) >= 2
    semantic = {(min(i, j), max(i, j)) for i in range(30) for j in np.argsort(-similarity[i])[:2].tolist()}
    assert pairs[: len(semantic)] == [p for p in pairs if p in semantic]  # semantic pairs first, then random
    assert len(pairs) - len(semantic) <= 2 * 30


def test_augsbert_reannotates_another_file_with_a_teacher_trained_on_the_gold_pairs(tiny_model_dir, monkeypatch):
    """Tables 6.7/6.8: the teacher learns train_file; the bi-encoder learns reannotate_file's pairs, labelled
    by that teacher."""
    import sentsweep.trainables.augsbert as augsbert
    from sentsweep.data import read_scored_pairs
    from sentsweep.demo_data import DEMO_DIR

    seen = {}
    original_setup, original_teacher = augsbert.cosine_similarity_setup, augsbert.build_teacher
    original_train = augsbert.train_teacher
    monkeypatch.setattr(augsbert, "cosine_similarity_setup",
                        lambda model, examples, metrics=None: seen.setdefault("setup", original_setup(
                            model, examples, metrics)))
    monkeypatch.setattr(augsbert, "build_teacher", lambda *a: seen.setdefault("teacher", original_teacher(*a)))
    monkeypatch.setattr(augsbert, "train_teacher",
                        lambda teacher, pairs, *a, **k: seen.setdefault("taught", pairs) and original_train(
                            teacher, pairs, *a, **k))
    other = DEMO_DIR / "sts-dev.csv"  # stands in for the BWS train split
    config = base_config(tiny_model_dir) | {"method": "augsbert", "teacher": "cbe", "sampling": "none",
                                            "reannotate_file": str(other), "max_steps": 2}
    train(config, LocalSession())
    assert seen["taught"].source == read_scored_pairs(DEMO_DIR / "sts-train.csv").source
    target = read_scored_pairs(other)
    examples = seen["setup"].examples
    assert [(a, b) for a, b, _ in examples] == list(zip(target.sentences1, target.sentences2))
    assert [y for _, _, y in examples] == pytest.approx(seen["teacher"].predict(target.sentences1, target.sentences2),
                                                        abs=1e-6)

    with pytest.raises(InputError, match=r"reannotate_file=.*sts-dev.csv.*reannotate_gold is false"):
        validate_config(config | {"reannotate_gold": False})
    with pytest.raises(InputError, match=r"no-such-bws.csv"):
        validate_config(config | {"reannotate_file": str(DEMO_DIR / "no-such-bws.csv")})
    with pytest.raises(InputError, match=r"reannotate_file=.*needs setting 'semi'"):
        validate_config(config | {"setting": "unsupervised", "sampling": "random"})


def test_semantic_search_embeds_with_the_named_retriever(tiny_model_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    import sentsweep.trainables.augsbert as augsbert
    from sentsweep.models import load_sentence_model

    folder = tmp_path / "retriever"
    load_sentence_model(str(tiny_model_dir), "mean", 32).save(str(folder))  # a "fine-tuned" bi-encoder: mean pooled
    sentences = read_corpus(CORPUS_FILE)[:50]
    config = base_config(tiny_model_dir) | {"method": "augsbert", "sampling": "semantic", "top_k": 2,
                                            "pooling": "cls", "retriever": str(folder)}
    pairs = augsbert.silver_candidates(resolve_trial(config), sentences, random.Random(0))
    embeddings = SentenceTransformer(str(folder), device="cpu").encode(sentences).astype(np.float64)
    # the retriever's 2nd and 3rd most similar others differ by > 2e-5 here: an exact comparison holds
    assert set(pairs) == set(augsbert.semantic_pairs(VectorScorer(dict(zip(sentences, embeddings))), sentences, 2))
    as_released = augsbert.silver_candidates(resolve_trial(config | {"retriever": None}), sentences,
                                               random.Random(0))
    assert set(as_released) != set(pairs)  # `model` with the trial's CLS pooling: other neighbours
    with pytest.raises(InputError, match=r"no-such-retriever"):
        validate_config(config | {"retriever": str(tmp_path / "no-such-retriever")})


def test_domain_mlm_runs_the_settings_steps_batch_and_rate(tiny_model_dir, monkeypatch):
    import sentsweep.trainables.augsbert as augsbert
    from sentsweep.trainables.augsbert import AugsbertSettings

    defaults = {row.name: row for row in AugsbertSettings.describe()}
    assert (defaults["domain_mlm_steps"].default, defaults["domain_mlm_batch_size"].default,
            defaults["domain_mlm_lr"].default) == (12_500, 64, 3e-5)
    assert all("Reiml 2023 §5.4.3" in str(defaults[name].source) and "12.5K steps" in str(defaults[name].source)
               for name in ("domain_mlm_steps", "domain_mlm_batch_size", "domain_mlm_lr"))
    assert defaults["reannotate_gold"].default is True and "Reiml 2023 §5.5" in str(defaults["reannotate_gold"].source)
    calls = []
    original = augsbert.domain_adapt
    monkeypatch.setattr(augsbert, "domain_adapt", lambda *a, **k: calls.append(a) or original(*a, **k))
    config = base_config(tiny_model_dir) | {"method": "augsbert", "setting": "domain", "sampling": "random",
                                            "domain_mlm_steps": 3, "domain_mlm_batch_size": 5,
                                            "domain_mlm_lr": 7e-5, "max_steps": 1}
    train(config, LocalSession())
    assert calls[0][3:6] == (3, 5, 7e-5)


# --- GPL: a fresh mined negative each time a query is trained on (TSDAE+GPL draft; GPL's training data) ---


def gpl_draws(tiny_model_dir, generator, monkeypatch) -> tuple[list, dict]:
    """Train GPL for 2 epochs of 3 steps over 24 queries; returns the candidates and each step's draws."""
    import sentsweep.trainables.gpl as gpl

    draws, seen = [], {}
    original = gpl.draw_negatives

    def spy(candidates, query_ids, rng):
        seen["candidates"] = candidates
        negatives = original(candidates, query_ids, rng)
        draws.append(dict(zip(query_ids, negatives)))
        return negatives

    config = base_config(tiny_model_dir) | {"method": "gpl", "generator": str(generator), "sample_size": 24,
                                            "queries_per_passage": 1, "negatives_top_k": 5, "batch_size": 8,
                                            "max_steps": 6, "eval_steps": 3}
    with monkeypatch.context() as patched:
        patched.setattr(gpl, "draw_negatives", spy)
        train(config, LocalSession())
    return seen["candidates"], draws


@pytest.mark.slow  # a real training run of seconds or more
def test_gpl_draws_a_fresh_negative_for_each_query_every_epoch_reproducibly(tiny_model_dir, tmp_path, monkeypatch):
    from sentsweep.models import build_tiny_seq2seq

    generator = build_tiny_seq2seq(tmp_path / "t5", tiny_model_dir)
    candidates, draws = gpl_draws(tiny_model_dir, generator, monkeypatch)
    assert len(draws) == 6 and len(candidates) == 24
    epochs = [{q: n for step in draws[:3] for q, n in step.items()},
              {q: n for step in draws[3:] for q, n in step.items()}]
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(24))  # every query once per epoch
    for epoch in epochs:
        assert all(negative in candidates[query] for query, negative in epoch.items())
    assert all(len(row) == 5 and query not in row for query, row in enumerate(candidates))  # own passage excluded
    changed = sum(epochs[0][q] != epochs[1][q] for q in range(24))
    assert changed >= 12, changed  # 1 in 5 stays by chance: about 19 of 24 change
    # the same seed draws the same negatives at the same steps
    assert gpl_draws(tiny_model_dir, generator, monkeypatch)[1] == draws


def test_gpl_margins_are_the_cross_encoder_logit_differences_scored_once():
    from sentsweep.trainables.gpl import MarginLabels

    class LogitTeacher:
        """Logit = number of characters the two texts share, and a count of the pairs it scored."""

        def __init__(self):
            self.scored = []

        def predict(self, texts1, texts2, logits=False):
            assert logits
            self.scored.extend(zip(texts1, texts2))
            return np.array([float(len(set(a) & set(b))) for a, b in zip(texts1, texts2)])

    passages = ["apple pie", "banana split", "cherry tart", "date loaf"]
    queries = ["apple?", "banana?", "cherry?"]
    teacher = LogitTeacher()
    labels = MarginLabels(teacher, queries, [passages[0], passages[1], passages[2]], passages)
    assert len(teacher.scored) == 3  # the positives, once
    margins = labels([0, 1, 0], [3, 2, 3])
    shared = lambda a, b: len(set(a) & set(b))  # noqa: E731
    assert margins == [shared(queries[0], passages[0]) - shared(queries[0], passages[3]),
                       shared(queries[1], passages[1]) - shared(queries[1], passages[2]),
                       shared(queries[0], passages[0]) - shared(queries[0], passages[3])]
    assert len(teacher.scored) == 5  # (0, 3) scored once although asked for twice
    labels([0, 1], [3, 2])
    assert len(teacher.scored) == 5


# --- topic-sensitive training: the Classifier baseline and prompted topic inputs (Reiml 2023 §4.4, §5.6) ---


def animal_topics(path, n=120, three_columns=False):
    """n demo sentences, half labelled 'animals' (they name one), half 'other' (prompts 'nature' / 'culture')."""
    corpus = read_corpus(CORPUS_FILE)
    animal = [s for s in corpus if any(w in s.lower().split() for w in ANIMALS)]
    corpus = [s for pair in zip(animal, [s for s in corpus if s not in animal]) for s in pair][:n]
    lines = []
    for sentence in corpus:
        label = "animals" if any(w in sentence.lower().split() for w in ANIMALS) else "other"
        prompt = {"animals": "nature", "other": "culture"}[label]
        lines.append(f"{label}\t{prompt}\t{sentence}\n" if three_columns else f"{label}\t{sentence}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_topic_files_give_labels_prompts_and_prompted_sentences(tmp_path):
    from sentsweep.topics import read_prompted_topic_corpus, read_topic_corpus, read_topic_table

    (tmp_path / "two.tsv").write_text("cars\ta red car\n\npets\ta cat\n", encoding="utf-8")
    (tmp_path / "three.tsv").write_text("rec.autos\trec\ta red car\nalt.atheism\talt\tno god\n", encoding="utf-8")
    assert read_topic_corpus(tmp_path / "two.tsv") == (["cars", "pets"], ["a red car", "a cat"])
    assert read_prompted_topic_corpus(tmp_path / "two.tsv") == (["cars", "pets"], ["cars ¥ a red car", "pets ¥ a cat"])
    assert read_topic_table(tmp_path / "three.tsv").prompts == ["rec", "alt"]
    assert read_topic_corpus(tmp_path / "three.tsv") == (["rec.autos", "alt.atheism"], ["a red car", "no god"])
    assert read_prompted_topic_corpus(tmp_path / "three.tsv")[1] == ["rec ¥ a red car", "alt ¥ no god"]
    (tmp_path / "bad.tsv").write_text("a\tb\tc\td\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv, line 1: expected 'topic<TAB>sentence'"):
        read_topic_table(tmp_path / "bad.tsv")


def test_topic_classifier_learns_the_topics_and_fine_tunes_the_encoder(tiny_model_dir, tmp_path):
    from sentsweep.trainables.loop import run_trial
    from sentsweep.trainables.topic_classifier import build_topic_classifier

    topics = animal_topics(tmp_path / "topics.tsv")
    config = base_config(tiny_model_dir) | {"method": "topic_classifier", "topic_corpus": str(topics),
                                            "max_steps": 40, "eval_steps": 20}
    trial = resolve_trial(config)
    setup = build_topic_classifier(trial)
    labels, texts = read_corpus_labels(topics)
    truth = np.array([setup.module.classes.index(label) for label in labels])

    def accuracy():
        setup.module.eval()
        with torch.no_grad():
            return float(np.mean(setup.module(texts).argmax(1).cpu().numpy() == truth))

    before = accuracy()
    encoder_before = {k: v.clone() for k, v in setup.model.state_dict().items()}
    session = LocalSession()
    run_trial(trial, lambda _: setup, session)
    after = accuracy()
    assert session.reports[-1]["topic_classes"] == 2 and session.reports[-1]["topic_sentences"] == 120
    assert after >= 0.8 and after > before + 0.25, (before, after)  # balanced classes: chance is 0.5
    assert any(not torch.equal(encoder_before[k], v) for k, v in setup.model.state_dict().items())
    # prompted inputs: each sentence with its topic prompt
    prompted = build_topic_classifier(resolve_trial(config | {"classifier_inputs": "prompted"}))
    assert [text for text, _ in prompted.examples] == [f"{label} ¥ {text}" for label, text in zip(labels, texts)]
    single = tmp_path / "single.tsv"
    single.write_text("pets\ta cat\npets\ta dog\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"single.tsv.*single class 'pets'"):
        validate_config(config | {"topic_corpus": str(single)})


def read_corpus_labels(path):
    from sentsweep.topics import read_topic_corpus

    return read_topic_corpus(path)


def test_each_nli_premise_gets_an_entailment_as_positive_and_a_contradiction_as_hard_negative_drawn_by_seed():
    """sentence-transformers' training_nli_v2.py (the NLI+STS step's project choice; TSDAE §5.1 names MNRL)."""
    from sentsweep.data import NliPremises
    from sentsweep.trainables.sbert import hard_negative_triplets

    premises = NliPremises(entailments={"p": ["e1", "e2", "e3"], "q": ["f"], "r": ["g"]},
                           contradictions={"p": ["c1", "c2", "c3"], "q": ["d"]}, source="memory")
    triplets = {seed: hard_negative_triplets(premises, seed) for seed in range(20)}
    for chosen in triplets.values():
        assert [premise for premise, _, _ in chosen] == ["p", "q"]  # r has no contradiction
        assert chosen[1] == ("q", "f", "d")
        assert chosen[0][1] in {"e1", "e2", "e3"} and chosen[0][2] in {"c1", "c2", "c3"}
    assert triplets[3] == hard_negative_triplets(premises, 3)
    assert len({chosen[0] for chosen in triplets.values()}) > 1  # the seed draws


def test_the_domain_chains_teacher_freezes_its_embeddings_after_domain_mlm(tiny_model_dir):
    """Reiml 2023 §5.4.3: "After MLM pre-training, we freeze the embedding weights and fine-tune our Cross-Bi-Encoder":
    the augsbert stage of domain_chain_augsbert (its model the MLM stage's) and setting domain freeze; a teacher
    fine-tuned from a plain checkpoint does not."""
    from sentsweep.experiments import get_experiment
    from sentsweep.trainables.augsbert import freezes_teacher_embeddings

    protocol = get_experiment("domain_chain_augsbert").protocol
    config = base_config(tiny_model_dir) | protocol.constants() | protocol.settings_of("augsbert")
    trial = validate_config(config | {"method": "augsbert"})
    assert trial.settings.setting == "unsupervised" and freezes_teacher_embeddings(trial.settings)
    plain = validate_config(base_config(tiny_model_dir) | {"method": "augsbert", "setting": "unsupervised"})
    assert not freezes_teacher_embeddings(plain.settings)
    domain = validate_config(base_config(tiny_model_dir) | {"method": "augsbert", "setting": "domain"})
    assert freezes_teacher_embeddings(domain.settings)
