"""Augmented SBERT (Reiml (2023), chapters 5-6): a teacher labels silver pairs for an SBERT bi-encoder.

`augsbert`: a teacher (`teacher`: a cross-encoder or a Cross-Bi-Encoder, trained from `model` on the gold pairs)
annotates silver pairs sampled by `sampling` (none, random, KDE, BM25 or semantic search); the student bi-encoder
trains on gold and silver pairs and is selected on STS dev. The teacher and its labels are preparation stages
(`sentsweep.preparation_cache`), shared by the trials whose settings they depend on.

Details: docs/methods.md, "Augmented SBERT's teacher, sampling and student"."""

from __future__ import annotations

import json
import math
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from sentsweep.data import ScoredPairs, read_corpus, read_scored_pairs
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.models import check_model_source, load_sentence_model
from sentsweep.pair_models import CE_ACTIVATIONS, TEACHERS, build_teacher
from sentsweep.preparation_cache import PreparationCache, Stage
from sentsweep.preparation_cache.digests import pairs_digest, source_digest, value_digest
from sentsweep.references import AUGMENTED_SBERT, THESIS_REIML_2023
from sentsweep.sampling import (
    SAMPLING_STRATEGIES,
    bm25_pairs,
    iterative_kde,
    random_pairs,
    semantic_pairs,
    semantic_random_pairs,
)
from sentsweep.scorers import EmbeddingScorer
from sentsweep.settings import cited, project_choice, setting
from sentsweep.topics import TOPIC_DELIMITER, read_topic_table
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.sbert import SbertSettings, cosine_similarity_setup, gold_pairs, trial_device
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.settings import Method, Trial
from sentsweep.trainables.teachers import (
    correlations,
    domain_adapt,
    freeze_embeddings,
    in_fresh_memory,
    load_teacher,
    save_teacher,
    train_teacher,
)

AUGSBERT_SETTINGS = ("semi", "unsupervised", "domain")
# A report's entry {file name: JSON content} of files for the trial's MLflow run (see TeacherAgreementSession).
ARTIFACTS_KEY = "artifacts"
SILVER_ARTIFACT = "silver_scores.json"
AGREEMENT_METRIC = "teacher_student_spearman_at_best_dev"
AGREEMENT_FILE = "teacher_agreement.json"
DOMAIN_MODEL = "model"  # the domain MLM checkpoint's folder in its cache entry
DOMAIN_MLM = Stage("augsbert_domain_mlm", 1, "the teacher's MLM pre-training on the silver pairs (setting domain)",
                   seeded=True)
AUGSBERT_TEACHER = Stage("augsbert_teacher", 1, "the teacher trained on the gold pairs", seeded=True)
AUGSBERT_ANNOTATIONS = Stage("augsbert_annotations", 1, "the teacher's scores of the dev, test, candidate and "
                             "re-annotated pairs (the silver labels)", seeded=False)
AUGSBERT_STAGES = (DOMAIN_MLM, AUGSBERT_TEACHER, AUGSBERT_ANNOTATIONS)


DOMAIN_MLM_QUOTE = '"12.5K steps of MLM pretraining with a batch size of 64 and a learning rate of 3e-5"'


@dataclass(frozen=True)
class AugsbertSettings(SbertSettings):
    """Augmented SBERT: a teacher trained on the gold pairs labels silver pairs for the bi-encoder (SBERT's
    settings, and the teacher's and the silver pairs')."""

    teacher: str = setting("cbe", "ce: cross-encoder; cbe: Cross-Bi-Encoder",
                           project_choice("Reiml 2023 §5.5 runs both and proposes the CBE"), choices=tuple(TEACHERS))
    teacher_activation: str = setting(
        "sigmoid", "the cross-encoder's output activation on its logit: sigmoid, none or tanh (the CE is "
        "trained with BCE on sigmoid(logit) either way; the CBE scores by cosine and ignores it)",
        cited(THESIS_REIML_2023, "§4.1.2, Table 6.2", '"a similarity score s ∈ (0, 1) due to its sigmoid '
              'activation function"; Table 6.2 compares none and tanh'), choices=CE_ACTIVATIONS)
    teacher_checkpoint: str = setting(
        "best_dev", "the teacher's weights: those of its epoch with the best dev Spearman, or of its last epoch",
        cited(THESIS_REIML_2023, "§5.1", '"After each epoch, we evaluate our models and take the model with the '
              'best Spearman"'), choices=("best_dev", "last"))
    teacher_dev_file: str | None = setting(
        None, "scored pairs that select the teacher's epoch (none: dev_file), read in eval_format",
        project_choice("Reiml 2023 §5.1 selects every model on a dev split; none here: the trial's dev_file"))
    sampling: str = setting("semantic_random", "how silver pairs are drawn",
                            cited(THESIS_REIML_2023, "§6.2", '"For our subsequent studies, we use the combined '
                                  'approach of semantic and random sampling"'), choices=SAMPLING_STRATEGIES)
    top_k: int = setting(3, "BM25 or semantic-search partners per sentence (random: top_k x sentences pairs)",
                         project_choice("Reiml 2023 §5.6.1 uses 2 (UKP) and 4 (20 Newsgroups) positives per sentence"),
                         ge=1)
    random_pairs_per_sentence: int = setting(
        3, "random partners per sentence of semantic_random and of the iterative KDE's candidates",
        project_choice("Reiml 2023 §5.6.1 uses 2 (UKP) and 4 (20 Newsgroups) negatives per sentence"), ge=1)
    retriever: str | None = setting(
        None, "sentence-embedding model of semantic search (a fine-tuned bi-encoder's folder or hub name, used "
        "with its own pooling); none: `model` as released with `pooling`",
        project_choice("Reiml 2023 §6.2, Figure 6.3 find a fine-tuned retriever best and do not name it"))
    teacher_epochs: int = setting(3, "epochs of the teacher on the gold pairs",
                                  cited(THESIS_REIML_2023, "§5.2.1", '"fine-tuned for three epochs"'), ge=1)
    teacher_batch_size: int = setting(16, "the teacher's batch size",
                                      cited(THESIS_REIML_2023, "§5.1", '"our batch size is set to 16"'), ge=1)
    teacher_lr: float = setting(2e-5, "the teacher's AdamW learning rate (10% warm-up, linear decay, wd 0.01)",
                                cited(THESIS_REIML_2023, "§5.1", '"we set our learning rate to 2e-5"'), gt=0)
    domain_mlm_steps: int = setting(12_500, "MLM steps of the teacher on the silver pairs (setting domain)",
                                    cited(THESIS_REIML_2023, "§5.4.3", DOMAIN_MLM_QUOTE), ge=1)
    domain_mlm_batch_size: int = setting(64, "pairs per MLM step (setting domain)",
                                         cited(THESIS_REIML_2023, "§5.4.3", DOMAIN_MLM_QUOTE), ge=1)
    domain_mlm_lr: float = setting(3e-5, "AdamW learning rate of the MLM steps, constant (setting domain)",
                                   cited(THESIS_REIML_2023, "§5.4.3", DOMAIN_MLM_QUOTE), gt=0)
    freeze_teacher_embeddings: bool = setting(
        False, "the teacher's word, position and token-type embeddings get no gradient (always with setting domain: "
        "after its MLM; a chain sets it when the model comes from a domain MLM stage)",
        cited(THESIS_REIML_2023, "§5.4.3", 'only after domain MLM: "After MLM pre-training, we freeze the embedding '
              'weights and fine-tune our Cross-Bi-Encoder"'))
    student_init: str = setting("model", "domain: the bi-encoder starts from the domain MLM checkpoint",
                                project_choice("Reiml 2023 §5.4.3 trains both"), choices=("model", "domain"))
    topic_corpus: str | None = setting(None, '"topic<TAB>sentence" lines: silver sentences with topic prompts',
                                       project_choice())
    topic_prompt: str = setting("shown", "whether the bi-encoder sees the topic prompt",
                                project_choice("Reiml 2023 §5.6.1 compares both"), choices=("shown", "hidden"))
    reannotate_gold: bool = setting(True, "replace the gold labels by the teacher's scores",
                                    cited(THESIS_REIML_2023, "§5.5", '"The train datasets are reannotated using our '
                                          'trained Cross-Encoders as a form of label regularization"'))
    reannotate_file: str | None = setting(
        None, "scored pairs (read in eval_format; their scores unused) the teacher re-annotates and the "
        "bi-encoder learns from instead of the gold pairs; their sentences give the semi setting's silver pairs",
        cited(THESIS_REIML_2023, "§5.2.2, Tables 6.7-6.8", "teacher trained on STS-B, BWS train re-annotated; "
              "none here: the gold pairs themselves"))
    # Declared last: inside the class body its name hides the `setting` function.
    setting: str = setting("semi", "semi: silver pairs from the gold sentences; unsupervised / domain: from "
                           "the corpus", project_choice("Reiml 2023 has semi (§5.5) and unsupervised (§5.4.3)"),
                           choices=AUGSBERT_SETTINGS)

    def __post_init__(self) -> None:
        if self.retriever is not None:
            check_model_source(self.retriever)


def freezes_teacher_embeddings(settings: AugsbertSettings) -> bool:
    """Whether the teacher trains with frozen embeddings: after domain MLM (Reiml 2023 §5.4.3), its own or a chain's."""
    return settings.setting == "domain" or settings.freeze_teacher_embeddings


def check_augsbert(trial: Trial) -> None:
    """Settings that only fail together."""
    settings = trial.settings
    if settings.loss != "cosine":
        raise InputError(f"loss={settings.loss!r}: augsbert trains on the teacher's scored silver pairs, with the "
                         "cosine loss only")
    if settings.setting != "semi" and settings.sampling == "none":
        raise InputError(f"setting {settings.setting!r} trains on silver pairs only, so sampling 'none' leaves nothing")
    if settings.student_init == "domain" and settings.setting != "domain":
        raise InputError("student_init 'domain' needs setting 'domain' (the MLM checkpoint it starts from)")
    if settings.reannotate_file is not None and not settings.reannotate_gold:
        raise InputError(f"reannotate_file={settings.reannotate_file!r} is re-annotated by the teacher, but "
                         "reannotate_gold is false")
    if settings.reannotate_file is not None and settings.setting != "semi":
        raise InputError(f"reannotate_file={settings.reannotate_file!r} needs setting 'semi' (setting "
                         f"{settings.setting!r} trains on silver pairs only)")
    # the extra data files are read now, so a missing or malformed one fails before anything is trained
    for path, split in ((settings.teacher_dev_file, "dev"), (settings.reannotate_file, "train")):
        if path is not None:
            read_scored_pairs(path, trial.evaluation.eval_format, split)
    if settings.topic_corpus is not None:
        if settings.setting == "semi":
            raise InputError(f"topic_corpus={settings.topic_corpus!r} gives the silver sentences of setting "
                             "'unsupervised' or 'domain'; setting 'semi' draws them from the gold pairs")
        read_topic_table(settings.topic_corpus)


def semantic_retriever(trial: Trial):
    """The model semantic search embeds with: `retriever` as it is configured, or `model` with `pooling`."""
    settings, training = trial.settings, trial.training
    if settings.retriever is not None:
        return load_sentence_model(settings.retriever, None, training.max_seq_length, device=trial_device())
    return load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=trial_device())


def silver_candidates(trial: Trial, sentences: list[str], rng: random.Random) -> list[tuple[int, int]]:
    """Index pairs into `sentences` by the configured strategy (for 'kde': its semantic + random candidates)."""
    settings = trial.settings
    strategy, top_k = settings.sampling, settings.top_k
    if strategy == "none":
        return []
    if strategy == "random":
        return random_pairs(top_k * len(sentences), len(sentences), rng)
    if strategy == "bm25":
        return bm25_pairs(sentences, top_k)
    scorer = EmbeddingScorer(semantic_retriever(trial))
    if strategy == "semantic":
        return semantic_pairs(scorer, sentences, top_k)
    return semantic_random_pairs(scorer, sentences, top_k, settings.random_pairs_per_sentence, rng)


def _rounded(values) -> list[float]:
    return [round(float(value), 6) for value in values]


def build_augsbert(trial: Trial, agreement: TeacherAgreementSession | None = None) -> TrainingSetup:
    """The bi-encoder's setup on gold (or re-annotated) and silver pairs; with `agreement`, it is given what
    it needs to report the teacher-student agreement and the silver scores. The domain MLM, the teacher and its
    annotations go through the preparation cache (`AUGSBERT_STAGES`)."""
    settings, training, evaluation, seed = trial.settings, trial.training, trial.evaluation, trial.seed
    cache = PreparationCache(training.preparation_cache)
    rng = random.Random(seed)
    gold = gold_pairs(trial)
    dev = read_scored_pairs(evaluation.dev_file, evaluation.eval_format, "dev")
    test = read_scored_pairs(evaluation.test_file, evaluation.eval_format, "test")
    teacher_dev = (read_scored_pairs(settings.teacher_dev_file, evaluation.eval_format, "dev")
                   if settings.teacher_dev_file else dev)
    labelled = (read_scored_pairs(settings.reannotate_file, evaluation.eval_format, "train")
                if settings.reannotate_file else gold)
    sentences, topics = _silver_sentences(trial, labelled)
    # pairs are drawn between the sentences; the topic prompts are then given to each sentence of a pair
    pairs = silver_candidates(trial, sentences, rng)
    prompted = topics.prompted() if topics else sentences
    candidates = ([prompted[i] for i, _ in pairs], [prompted[j] for _, j in pairs])

    teacher_source = training.model
    # the domain-adapted model's folder, until the teacher and the student are loaded from it (below)
    scratch = tempfile.TemporaryDirectory(prefix="sentsweep-domain-")
    if settings.setting == "domain":
        protect_prefix = TOPIC_DELIMITER if topics else None
        teacher_source = cache.get_or_compute(DOMAIN_MLM, lambda: {
            "model": source_digest(training.model), "pairs": value_digest(candidates),
            "steps": settings.domain_mlm_steps, "batch_size": settings.domain_mlm_batch_size,
            "lr": settings.domain_mlm_lr, "max_length": training.max_seq_length, "protect_prefix": protect_prefix,
            "seed": seed}, lambda: domain_adapt(
                training.model, *candidates, settings.domain_mlm_steps, settings.domain_mlm_batch_size,
                settings.domain_mlm_lr, seed, scratch.name, training.max_seq_length, protect_prefix=protect_prefix),
            save=lambda adapted, content: shutil.copytree(adapted, content / DOMAIN_MODEL),
            load=lambda content: str(content / DOMAIN_MODEL))
    semi = settings.setting == "semi"  # the other settings train on silver pairs only
    reannotated = semi and settings.reannotate_gold
    annotated = _teacher_annotations(trial, cache, teacher_source, gold, labelled, (teacher_dev, dev, test),
                                     candidates, reannotated)
    dev_spearman, _ = correlations(annotated["dev"], dev)
    test_spearman, test_pearson = correlations(annotated["test"], test)
    teacher_test_scores = np.asarray(annotated["test"])
    metrics = {"teacher_sts_dev": dev_spearman, "teacher_sts_test": test_spearman,
               "teacher_sts_test_pearson": test_pearson, "teacher_best_epoch": annotated["best_epoch"]}

    candidate_scores = np.asarray(annotated["candidates"], dtype=np.float64)
    gold_targets = [s / settings.score_max for s in gold.scores]
    kept = iterative_kde(gold_targets, candidate_scores, rng) if settings.sampling == "kde" else range(len(pairs))
    pairs, silver_scores = [pairs[k] for k in kept], [candidate_scores[k] for k in kept]
    student_texts = prompted if topics and settings.topic_prompt == "shown" else sentences
    silver = [(student_texts[i], student_texts[j], float(score)) for (i, j), score in zip(pairs, silver_scores)]
    labels = (np.asarray(annotated["reannotated"]) if reannotated
              else np.asarray(labelled.scores) / settings.score_max)
    labelled_examples = [(a, b, float(y)) for a, b, y in zip(labelled.sentences1, labelled.sentences2, labels)]
    examples = (labelled_examples if semi else []) + silver
    student_source = teacher_source if settings.student_init == "domain" else training.model
    torch.manual_seed(seed)
    model = load_sentence_model(student_source, settings.pooling, training.max_seq_length, device=trial_device(),
                                dropout=training.dropout)
    scratch.cleanup()
    metrics |= {"silver_pairs": len(silver), "gold_pairs": len(labelled_examples) if semi else 0}
    if agreement is not None:
        scores = {"teacher": settings.teacher, "teacher_activation": settings.teacher_activation,
                  "sampling": settings.sampling, "setting": settings.setting, "seed": seed,
                  "gold": _rounded(gold_targets), "candidates": _rounded(candidate_scores),
                  "silver": _rounded(silver_scores),
                  "reannotated": _rounded(labels) if reannotated else None}
        agreement.watch(model, test, teacher_test_scores, {SILVER_ARTIFACT: scores})
    setup = cosine_similarity_setup(model, examples, metrics)
    setup.cache_uses = cache.used
    return setup


def _silver_sentences(trial: Trial, labelled) -> tuple[list[str], object]:
    """(sentences the silver pairs are drawn between, their topic table or None): the labelled pairs' sentences
    in the semi-supervised setting, else the topic corpus's or the training corpus's."""
    settings, training = trial.settings, trial.training
    if settings.setting == "semi":
        return list(dict.fromkeys(labelled.sentences1 + labelled.sentences2)), None
    if settings.topic_corpus:
        topics = read_topic_table(settings.topic_corpus)
        return topics.sentences, topics
    return read_corpus(training.corpus_file()), None


def _teacher_annotations(trial: Trial, cache: PreparationCache, teacher_source: str, gold, labelled,
                         scored: tuple, candidates: tuple, reannotated: bool) -> dict:
    """The teacher's scores (`annotations` below) of the dev, test, candidate and (`reannotated`) labelled pairs,
    and its best epoch, through the preparation cache: the teacher trained on `gold` from `teacher_source` (or
    loaded), `scored` its dev (for its checkpoint), the dev and the test pairs."""
    settings, training, seed = trial.settings, trial.training, trial.seed
    teacher_dev, dev, test = scored
    selecting = settings.teacher_checkpoint == "best_dev"

    def teacher_inputs() -> dict:
        return {"kind": settings.teacher, "model": source_digest(teacher_source),
                "max_seq_length": training.max_seq_length, "frozen_embeddings": freezes_teacher_embeddings(settings),
                "gold": pairs_digest(gold), "dev": pairs_digest(teacher_dev) if selecting else None,
                "score_max": settings.score_max, "epochs": settings.teacher_epochs,
                "batch_size": settings.teacher_batch_size, "lr": settings.teacher_lr, "seed": seed}

    def trained_teacher() -> tuple:
        torch.manual_seed(seed)
        teacher = build_teacher(settings.teacher, teacher_source, training.max_seq_length, trial_device(),
                                settings.teacher_activation)
        if freezes_teacher_embeddings(settings):
            freeze_embeddings(teacher.module)
        fit = train_teacher(teacher, gold, settings.score_max, settings.teacher_epochs, settings.teacher_batch_size,
                            settings.teacher_lr, seed, dev=teacher_dev if selecting else None)
        in_fresh_memory(teacher)  # as a teacher loaded from the cache is
        return teacher, fit

    def loaded_teacher(folder: Path) -> tuple:
        return load_teacher(settings.teacher, folder, training.max_seq_length, trial_device(),
                            settings.teacher_activation)

    def annotations() -> dict:
        """The teacher's scores of the dev, test, candidate and (re-annotated) labelled pairs, and its epoch."""
        teacher, fit = cache.get_or_compute(AUGSBERT_TEACHER, teacher_inputs, trained_teacher, save_teacher,
                                            loaded_teacher)
        scores = {name: teacher.predict(first, second).tolist() if first else []
                  for name, (first, second) in (("dev", (dev.sentences1, dev.sentences2)),
                                                ("test", (test.sentences1, test.sentences2)),
                                                ("candidates", candidates))}
        scores["reannotated"] = (teacher.predict(labelled.sentences1, labelled.sentences2).tolist() if reannotated
                                 else None)
        return scores | {"best_epoch": fit.best_epoch}

    return cache.get_or_compute(AUGSBERT_ANNOTATIONS, lambda: {
        "teacher": cache.key(AUGSBERT_TEACHER, teacher_inputs()), "activation": settings.teacher_activation,
        "dev": pairs_digest(dev), "test": pairs_digest(test), "candidates": value_digest(candidates),
        "reannotated": pairs_digest(labelled) if reannotated else None}, annotations)


class TeacherAgreementSession:
    """An augsbert trial's session: passes each report on to `session`, adding the Spearman correlation (x 100)
    between the teacher's and the bi-encoder's scores of the test pairs at the dev-selected checkpoint
    (`teacher_student_spearman_at_best_dev`, Reiml (2023) Table 6.3's "STS-B (Bi-Encoder)" column; measured
    when an evaluation is the new best on dev, as the loop measures test), and, with the first report, the
    watched files under `artifacts` ({file name: JSON content}). The value is saved in each checkpoint, so a
    resumed trial goes on reporting it."""

    def __init__(self, session) -> None:
        self.session = session
        self.model = None
        self.pairs: ScoredPairs | None = None
        self.teacher_scores = None
        self.artifacts: dict = {}
        self.value = math.nan

    def watch(self, model, pairs: ScoredPairs, teacher_scores, artifacts: dict) -> None:
        self.model, self.pairs, self.teacher_scores, self.artifacts = model, pairs, teacher_scores, artifacts

    def latest_checkpoint_dir(self):
        directory = self.session.latest_checkpoint_dir()
        if directory is not None and (Path(directory) / AGREEMENT_FILE).is_file():
            self.value = json.loads((Path(directory) / AGREEMENT_FILE).read_text())[AGREEMENT_METRIC]
        return directory

    def report(self, metrics: dict, checkpoint_dir: Path) -> None:
        if self.model is not None and metrics.get("step") == metrics.get("best_step"):
            student = EmbeddingScorer(self.model).pair_similarities(self.pairs.sentences1, self.pairs.sentences2)
            self.value = 100.0 * spearman(student, np.asarray(self.teacher_scores))
        extra = {AGREEMENT_METRIC: self.value}
        (Path(checkpoint_dir) / AGREEMENT_FILE).write_text(json.dumps(extra), encoding="utf-8")
        if self.artifacts:
            extra[ARTIFACTS_KEY], self.artifacts = self.artifacts, {}
        self.session.report(metrics | extra, checkpoint_dir)


def run_augsbert(trial: Trial, session=None):
    agreement = TeacherAgreementSession(session or TuneSession())
    return run_trial(trial, lambda typed: build_augsbert(typed, agreement), agreement)

def augsbert_unread_data(trial: Trial) -> tuple[str, ...]:
    """The corpus gives the silver sentences of setting 'domain' without a topic_corpus only (`build_augsbert`)."""
    return ("corpus",) if trial.settings.setting == "semi" or trial.settings.topic_corpus else ()


AUGSBERT_METHOD = Method("augsbert", AugsbertSettings, run_augsbert, AUGMENTED_SBERT, check=check_augsbert,
                         cached_stages=AUGSBERT_STAGES, unread_data=augsbert_unread_data)
