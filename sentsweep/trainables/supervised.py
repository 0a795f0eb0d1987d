"""Trainables of the supervised and semi-supervised settings (Reiml (2023), chapters 4-6; TSDAE paper, table 10).

- `sbert`: a bi-encoder trained on gold scored pairs with SBERT's CosineSimilarityLoss,
  L = mean_i (cos(u_i, v_i) - y_i)^2, y = score / score_max; with `sample_size` labelled pairs it is the
  in-domain supervised reference of the labelled-data intersection search.
- `augsbert`: Augmented SBERT. A teacher (`teacher`: 'ce' cross-encoder or 'cbe' Cross-Bi-Encoder, both
  trained from `model` on the gold pairs) annotates silver pairs sampled by `sampling` (see
  sentsweep.sampling), and the bi-encoder is trained on them with the same loss. `setting`:
  'semi' (silver pairs from the gold sentences, trained on gold + silver), 'unsupervised' (silver pairs from
  the target `corpus`, trained on silver only), 'domain' (as unsupervised, but the teacher first continues MLM
  pre-training on the silver pairs and fine-tunes with frozen embeddings; `student_init: domain` starts the
  bi-encoder from that MLM checkpoint too: FullDomainSBERT). With `topic_corpus` ("topic<TAB>sentence"
  lines) the silver sentences carry their topic prompt "topic ¥ sentence" for MLM and annotation, and
  `topic_prompt` says whether the bi-encoder sees it ('shown') or not ('hidden'). `reannotate_gold: true`
  replaces the gold labels by the teacher's scores (the distillation of section 5.2.2, a label
  regularisation; with `sampling: none` the bi-encoder learns from the re-annotated gold pairs alone).
Every preparation step is seeded by the trial's seed; a resumed trial repeats it identically.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

from sentsweep.data import ScoredPairs, read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, load_sentence_model, preprocess_on_device
from sentsweep.pair_models import TEACHERS, build_teacher
from sentsweep.references import AUGMENTED_SBERT, SBERT, THESIS_REIML_2023
from sentsweep.sampling import SAMPLING_STRATEGIES, bm25_pairs, iterative_kde, random_pairs, semantic_pairs
from sentsweep.scorers import EmbeddingScorer
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.topics import TOPIC_DELIMITER, read_topic_corpus, with_topic
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.settings import Method, Trial
from sentsweep.trainables.teachers import domain_adapt, freeze_embeddings, teacher_spearman, train_teacher

AUGSBERT_SETTINGS = ("semi", "unsupervised", "domain")


@dataclass(frozen=True)
class SbertSettings(Settings):
    """SBERT on gold scored pairs."""

    train_file: str = setting(help="the gold scored pairs (an STS benchmark sts-train.csv, SICK, a `datasets` "
                              "source)", source=required_input())
    pooling: str = setting("mean", "how token vectors become the sentence vector",
                           cited(THESIS_REIML_2023, "§2.4.4", "SBERT found MEAN pooling best"), choices=POOLING_MODES)
    score_max: float = setting(5.0, "gold scores are divided by it to lie in [0, 1]",
                               cited(THESIS_REIML_2023, "§3.1", '"dividing each score by 5"'), gt=0)


@dataclass(frozen=True)
class AugsbertSettings(SbertSettings):
    """Augmented SBERT: a teacher trained on the gold pairs labels silver pairs for the bi-encoder (SBERT's
    settings, and the teacher's and the silver pairs')."""

    teacher: str = setting("cbe", "ce: cross-encoder; cbe: Cross-Bi-Encoder",
                           project_choice("000 §5.5 runs both and proposes the CBE"), choices=tuple(TEACHERS))
    sampling: str = setting("bm25", "how silver pairs are drawn",
                            project_choice("000 §6.2 recommends semantic + random"), choices=SAMPLING_STRATEGIES)
    top_k: int = setting(3, "silver partners per sentence", project_choice(), ge=1)
    random_pairs_per_sentence: int = setting(3, "random candidates per sentence of the iterative KDE",
                                             project_choice(), ge=1)
    teacher_epochs: int = setting(3, "epochs of the teacher on the gold pairs",
                                  cited(THESIS_REIML_2023, "§5.2.1", '"fine-tuned for three epochs"'), ge=1)
    teacher_batch_size: int = setting(16, "the teacher's batch size",
                                      cited(THESIS_REIML_2023, "§5.1", '"our batch size is set to 16"'), ge=1)
    teacher_lr: float = setting(2e-5, "the teacher's AdamW learning rate (10% warm-up, linear decay, wd 0.01)",
                                cited(THESIS_REIML_2023, "§5.1", '"we set our learning rate to 2e-5"'), gt=0)
    domain_mlm_steps: int = setting(100, "MLM steps of the teacher on the silver pairs (setting domain)",
                                    project_choice("000 §5.4.3 uses 12.5K"), ge=1)
    student_init: str = setting("model", "domain: the bi-encoder starts from the domain MLM checkpoint",
                                project_choice("000 §5.4.3 trains both"), choices=("model", "domain"))
    topic_corpus: str | None = setting(None, '"topic<TAB>sentence" lines: silver sentences with topic prompts',
                                       project_choice())
    topic_prompt: str = setting("shown", "whether the bi-encoder sees the topic prompt",
                                project_choice("000 §5.6.1 compares both"), choices=("shown", "hidden"))
    reannotate_gold: bool = setting(False, "replace the gold labels by the teacher's scores",
                                    project_choice("000 §5.5 re-annotates"))
    # Declared last: inside the class body its name hides the `setting` function.
    setting: str = setting("semi", "semi: silver pairs from the gold sentences; unsupervised / domain: from "
                           "the corpus", project_choice("000 has semi (§5.5) and unsupervised (§5.4.3)"),
                           choices=AUGSBERT_SETTINGS)


def check_augsbert(trial: Trial) -> None:
    """Settings that only fail together."""
    settings = trial.settings
    if settings.setting != "semi" and settings.sampling == "none":
        raise InputError(f"setting {settings.setting!r} trains on silver pairs only, so sampling 'none' leaves nothing")
    if settings.student_init == "domain" and settings.setting != "domain":
        raise InputError("student_init 'domain' needs setting 'domain' (the MLM checkpoint it starts from)")


def gold_pairs(trial: Trial) -> ScoredPairs:
    """The gold training pairs, `sample_size` of them drawn with the trial's seed when given."""
    pairs = read_scored_pairs(trial.settings.train_file, trial.evaluation.eval_format, "train")
    size, seed = trial.training.sample_size, trial.seed
    if size is None or size >= len(pairs):
        return pairs
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), size))
    return ScoredPairs([pairs.sentences1[i] for i in chosen], [pairs.sentences2[i] for i in chosen],
                       [pairs.scores[i] for i in chosen], f"{pairs.source}[{size} of {len(pairs)}]")


def cosine_similarity_setup(model, examples: list[tuple[str, str, float]],
                            metrics: dict | None = None) -> TrainingSetup:
    """A bi-encoder trained on (sentence1, sentence2, label) with sentence-transformers' CosineSimilarityLoss."""
    loss = CosineSimilarityLoss(model)

    def batch_loss(batch, rng):
        first = preprocess_on_device(model, [example[0] for example in batch])
        second = preprocess_on_device(model, [example[1] for example in batch])
        labels = torch.tensor([example[2] for example in batch], dtype=torch.float32, device=model.device)
        return loss([first, second], labels)

    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics or {})


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_sbert(trial: Trial) -> TrainingSetup:
    settings, training = trial.settings, trial.training
    pairs = gold_pairs(trial)
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=_device())
    examples = [(a, b, s / settings.score_max) for a, b, s in zip(pairs.sentences1, pairs.sentences2, pairs.scores)]
    return cosine_similarity_setup(model, examples, {"gold_pairs": len(examples)})


def silver_candidates(trial: Trial, sentences: list[str], rng: random.Random) -> list[tuple[int, int]]:
    """Index pairs into `sentences` by the configured strategy (for 'kde': random + BM25 candidates)."""
    settings, training = trial.settings, trial.training
    strategy, top_k = settings.sampling, settings.top_k
    if strategy == "random":
        return random_pairs(top_k * len(sentences), len(sentences), rng)
    if strategy == "bm25":
        return bm25_pairs(sentences, top_k)
    if strategy == "semantic":
        retriever = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=_device())
        return semantic_pairs(EmbeddingScorer(retriever), sentences, top_k)
    if strategy == "kde":
        candidates = random_pairs(settings.random_pairs_per_sentence * len(sentences), len(sentences), rng)
        return list(dict.fromkeys(candidates + bm25_pairs(sentences, top_k)))
    return []


def build_augsbert(trial: Trial) -> TrainingSetup:
    settings, training, seed = trial.settings, trial.training, trial.seed
    rng = random.Random(seed)
    gold = gold_pairs(trial)
    topics = None
    if settings.setting == "semi":
        sentences = list(dict.fromkeys(gold.sentences1 + gold.sentences2))
    elif settings.topic_corpus:
        topics, sentences = read_topic_corpus(settings.topic_corpus)
    else:
        sentences = read_corpus(training.corpus)
    prompted = [with_topic(s, t) for s, t in zip(sentences, topics)] if topics else sentences
    pairs = silver_candidates(trial, prompted, rng)

    teacher_source = training.model
    if settings.setting == "domain":
        teacher_source = domain_adapt(
            training.model, [prompted[i] for i, _ in pairs], [prompted[j] for _, j in pairs],
            settings.domain_mlm_steps, training.batch_size, training.lr, seed, training.max_seq_length,
            protect_prefix=TOPIC_DELIMITER if topics else None)
    torch.manual_seed(seed)
    teacher = build_teacher(settings.teacher, teacher_source, training.max_seq_length, _device())
    if settings.setting == "domain":
        freeze_embeddings(teacher.module)
    train_teacher(teacher, gold, settings.score_max, settings.teacher_epochs, settings.teacher_batch_size,
                  settings.teacher_lr, seed)
    dev = read_scored_pairs(trial.evaluation.dev_file, trial.evaluation.eval_format, "dev")
    metrics = {"teacher_sts_dev": teacher_spearman(teacher, dev)}

    silver_scores = teacher.predict([prompted[i] for i, _ in pairs], [prompted[j] for _, j in pairs]) if pairs else []
    if settings.sampling == "kde":
        kept = iterative_kde([s / settings.score_max for s in gold.scores], silver_scores, rng)
        pairs, silver_scores = [pairs[k] for k in kept], [silver_scores[k] for k in kept]
    student_texts = prompted if topics and settings.topic_prompt == "shown" else sentences
    silver = [(student_texts[i], student_texts[j], float(score)) for (i, j), score in zip(pairs, silver_scores)]
    gold_labels = (teacher.predict(gold.sentences1, gold.sentences2) if settings.reannotate_gold
                   else [s / settings.score_max for s in gold.scores])
    gold_examples = [(a, b, float(y)) for a, b, y in zip(gold.sentences1, gold.sentences2, gold_labels)]
    examples = (gold_examples if settings.setting == "semi" else []) + silver
    del teacher
    student_source = teacher_source if settings.student_init == "domain" else training.model
    torch.manual_seed(seed)
    model = load_sentence_model(student_source, settings.pooling, training.max_seq_length, device=_device())
    metrics |= {"silver_pairs": len(silver), "gold_pairs": len(gold_examples) if settings.setting == "semi" else 0}
    return cosine_similarity_setup(model, examples, metrics)


SUPERVISED_METHODS = (
    Method("sbert", SbertSettings, lambda trial, session: run_trial(trial, build_sbert, session), SBERT),
    Method("augsbert", AugsbertSettings, lambda trial, session: run_trial(trial, build_augsbert, session),
           AUGMENTED_SBERT, check=check_augsbert),
)

