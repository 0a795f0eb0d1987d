"""The preparation cache: trials give the same results with and without it (GPL, Augmented SBERT), share what
their keys share, and name the entries they used in MLflow; corrupt entries are recomputed, concurrent trials
compute an entry once, an interrupted write leaves no entry, and pruning stays inside the cache folder."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.preparation_cache import RESULT_KEY, CorruptEntryWarning, PreparationCache, Stage
from sentsweep.preparation_cache.maintenance import find_entries, main as cache_command
from sentsweep.trainables.catalog import train
from sentsweep.trainables.compute import TIMING_METRICS
from sentsweep.trainables.session import LocalSession
from tests.helpers.cluster_helpers import PROJECT, sqlite_store

TOY = Stage("toy", 1, "a slow sum", seeded=False)
GPL_STAGES = {"gpl_queries", "gpl_negatives", "gpl_teacher", "gpl_margins", "untrained_evaluation"}


def trial_config(tiny_model_dir, **settings) -> dict:
    """A quick trial on the tiny model and the demo data (the quick sweeps' settings, fewer steps)."""
    return dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                test_file=str(DEMO_DIR / "sts-test.csv"), train_file=str(DEMO_DIR / "sts-train.csv"),
                eval_format="stsb", lr=1e-3, batch_size=16, max_steps=10, eval_steps=5, max_seq_length=32, seed=0,
                teacher_epochs=1, teacher_lr=3e-3) | settings


def run(config: dict, cache: Path | None, field: str = "status") -> tuple[list[dict], dict]:
    """(the trial's reports without what the cache changes, {stage: status (or key)} of the entries it used)."""
    session = LocalSession()
    train(config | {"preparation_cache": str(cache) if cache else None}, session)
    used = session.reports[0].get(RESULT_KEY, {})
    reports = [{key: value for key, value in report.items() if key not in (RESULT_KEY, *TIMING_METRICS)}
               for report in session.reports]
    return reports, {stage: use[field] for stage, use in used.items()}


def only(statuses: dict, status: str) -> set:
    return {stage for stage, value in statuses.items() if value == status}


@pytest.fixture(scope="module")
def generator(tiny_model_dir, tmp_path_factory):
    from sentsweep.models import build_tiny_seq2seq

    return build_tiny_seq2seq(tmp_path_factory.mktemp("t5") / "t5", tiny_model_dir)


@pytest.mark.slow  # a real training run of seconds or more
def test_gpl_gives_the_same_results_with_and_without_the_cache_and_shares_what_its_keys_share(
        tiny_model_dir, generator, tmp_path):
    cache = tmp_path / "cache"
    config = trial_config(tiny_model_dir, method="gpl", generator=str(generator), sample_size=30,
                          queries_per_passage=2, negatives_top_k=5)
    without, _ = run(config, None)
    computed, statuses = run(config, cache)
    assert computed == without and only(statuses, "computed") == GPL_STAGES
    loaded, statuses = run(config, cache)
    assert loaded == without and only(statuses, "hit") == GPL_STAGES

    # another learning rate shares every stage; its results are its own, as without the cache
    other_lr = config | {"lr": 3e-3}
    shared, statuses = run(other_lr, cache)
    assert only(statuses, "hit") == GPL_STAGES and shared == run(other_lr, None)[0] != without

    # a cached teacher whose weights changed on disk is recomputed, with a warning naming its entry
    [teacher] = (cache / "gpl_teacher").glob("*/content/model/model.safetensors")
    teacher.write_bytes(teacher.read_bytes()[:-8] + bytes(8))
    entry = teacher.parents[2]
    with pytest.warns(CorruptEntryWarning, match=rf"{entry}.*changed: model/model.safetensors"):
        recomputed, statuses = run(config, cache)
    assert recomputed == without and statuses["gpl_teacher"] == "recomputed"

    # another seed samples other passages and queries and trains another teacher; the untrained model it scores
    # differs only in weights its embedding never reads (the tiny model's pooler layer, drawn from the seed): that
    # evaluation is shared
    _, statuses = run(config | {"seed": 1}, cache)
    assert only(statuses, "computed") == GPL_STAGES - {"untrained_evaluation"}
    assert only(statuses, "hit") == {"untrained_evaluation"}


@pytest.mark.slow  # a real training run of seconds or more
def test_a_preparation_seed_gives_every_seed_one_shared_preparation(tiny_model_dir, generator, tmp_path):
    cache = tmp_path / "cache"
    config = trial_config(tiny_model_dir, method="gpl", generator=str(generator), sample_size=30,
                          queries_per_passage=2, negatives_top_k=5)
    seed_0, seed_0_keys = run(config, cache, "key")
    # preparation_seed 0 prepares exactly what seed 0 prepares for itself: the same entries, the same results
    assert run(config | {"preparation_seed": 0}, None)[0] == seed_0
    # seed 1 with preparation_seed 0 uses seed 0's preparation and untrained evaluation and trains on it with its
    # own seed: its results are its own, and they are those it gets without the cache
    shared_config = config | {"seed": 1, "preparation_seed": 0}
    seed_1, seed_1_keys = run(shared_config, cache, "key")
    _, statuses = run(shared_config, cache)
    assert seed_1_keys == {stage: seed_0_keys[stage] for stage in GPL_STAGES}
    assert only(statuses, "hit") == GPL_STAGES
    assert seed_1 == run(shared_config, None)[0] != seed_0
    assert seed_1 != run(config | {"seed": 1}, None)[0]  # the preparation seed changes what seed 1 trains on


@pytest.mark.slow  # a real training run of seconds or more
@pytest.mark.parametrize("settings, other, shared_stages", [
    # another sampling shares the teacher: loaded from the cache, it annotates other pairs exactly as the teacher
    # trained in the trial does
    (dict(setting="semi", teacher="ce", sampling="bm25", reannotate_gold=True, sample_size=60),
     {"sampling": "random"}, {"augsbert_teacher", "untrained_evaluation"}),
    # in setting domain the teacher learns the silver pairs first (MLM): another learning rate of the bi-encoder
    # shares everything, the annotations included, so the teacher is not even looked up
    (dict(setting="domain", teacher="cbe", sampling="kde", student_init="domain", top_k=2, random_pairs_per_sentence=2,
          domain_mlm_steps=2, domain_mlm_batch_size=8),
     {"lr": 3e-3}, {"augsbert_domain_mlm", "augsbert_annotations", "untrained_evaluation"}),
], ids=["semi-ce-bm25-reannotated", "domain-cbe-kde"])
def test_augsbert_gives_the_same_results_with_and_without_the_cache(tiny_model_dir, tmp_path, settings, other,
                                                                     shared_stages):
    cache = tmp_path / "cache"
    config = trial_config(tiny_model_dir, method="augsbert", **settings)
    without, _ = run(config, None)
    computed, statuses = run(config, cache)
    seeded = {"augsbert_teacher"} | ({"augsbert_domain_mlm"} if settings["setting"] == "domain" else set())
    assert computed == without
    assert only(statuses, "computed") == seeded | {"augsbert_annotations", "untrained_evaluation"}
    loaded, statuses = run(config, cache)
    assert loaded == without
    # a hit on the annotations needs no teacher: it is not even looked up
    assert only(statuses, "hit") == statuses.keys() == seeded - {"augsbert_teacher"} | {"augsbert_annotations",
                                                                                         "untrained_evaluation"}
    shared, statuses = run(config | other, cache)
    assert only(statuses, "hit") == shared_stages
    assert shared == run(config | other, None)[0]


def slow_sum(log: Path):
    def compute():
        with open(log, "a") as handle:
            handle.write("computed\n")
        time.sleep(0.5)
        return {"sum": 42}
    return compute


def test_a_corrupt_entry_is_named_recomputed_and_never_used(tmp_path):
    log = tmp_path / "log"
    cache = PreparationCache(tmp_path / "cache")
    inputs = lambda: {"numbers": [40, 2]}  # noqa: E731
    assert cache.get_or_compute(TOY, inputs, slow_sum(log)) == {"sum": 42}
    [entry] = [path for path in (tmp_path / "cache" / "toy").iterdir() if path.is_dir()]
    (entry / "content" / "value.json").write_text('{"sum": 41}')  # same length, other content
    with pytest.warns(CorruptEntryWarning, match=rf"{entry} does not match its digest \(changed: value.json\)"):
        assert cache.get_or_compute(TOY, inputs, slow_sum(log)) == {"sum": 42}
    assert cache.used["toy"].status == "recomputed"
    (entry / "manifest.json").unlink()
    with pytest.warns(CorruptEntryWarning, match="no readable manifest"):
        assert cache.get_or_compute(TOY, inputs, slow_sum(log)) == {"sum": 42}
    assert cache.get_or_compute(TOY, inputs, slow_sum(log)) == {"sum": 42}
    assert cache.used["toy"].status == "hit"
    assert log.read_text().count("computed") == 3


WORKER = """
import json, os, sys, time
from pathlib import Path
from sentsweep.preparation_cache import PreparationCache, Stage

root, log, go, crash = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "crash"
while not go.exists():  # every worker starts computing at the same moment
    time.sleep(0.005)

def compute():
    with open(log, "a") as handle:
        handle.write("computed\\n")
    time.sleep(1.0)
    return {"sum": 42}

def save(value, folder):
    (folder / "value.json").write_text('{"sum": ')
    if crash:
        os._exit(3)  # killed mid-write
    (folder / "value.json").write_text(json.dumps(value))

cache = PreparationCache(root)
value = cache.get_or_compute(Stage("toy", 1, "a slow sum", seeded=False), lambda: {"numbers": [40, 2]}, compute, save)
print(json.dumps({"value": value, "status": cache.used["toy"].status}))
"""


def start_workers(tmp_path: Path, count: int, crash: bool = False) -> list[subprocess.Popen]:
    """`count` processes that need the same missing entry, released at once."""
    go = tmp_path / "go"
    go.unlink(missing_ok=True)
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path / "cache"), str(tmp_path / "log"), str(go),
                                 "crash" if crash else "ok"], cwd=PROJECT, stdout=subprocess.PIPE, text=True)
               for _ in range(count)]
    time.sleep(1.0)  # every worker is up and waiting
    go.touch()
    return workers


def test_two_processes_needing_the_same_missing_entry_compute_it_once(tmp_path):
    outcomes = [json.loads(worker.communicate(timeout=60)[0]) for worker in start_workers(tmp_path, 2)]
    assert [outcome["value"] for outcome in outcomes] == [{"sum": 42}] * 2
    assert sorted(outcome["status"] for outcome in outcomes) == ["computed", "hit"]
    assert (tmp_path / "log").read_text() == "computed\n"
    assert [entry.complete for entry in find_entries(tmp_path / "cache")] == [True]


def test_without_working_locks_both_compute_and_the_first_entry_is_kept(tmp_path, monkeypatch):
    import threading

    import sentsweep.preparation_cache.entries as entries

    monkeypatch.setattr(entries, "locked", lambda path: contextlib.nullcontext())  # a filesystem without locks
    values = []
    threads = [threading.Thread(target=lambda: values.append(PreparationCache(tmp_path / "cache").get_or_compute(
        TOY, lambda: {"numbers": [40, 2]}, slow_sum(tmp_path / "log")))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert values == [{"sum": 42}] * 2 and (tmp_path / "log").read_text() == "computed\n" * 2
    assert [entry.complete for entry in find_entries(tmp_path / "cache")] == [True]  # one entry, no leftovers


def test_a_write_interrupted_midway_leaves_no_entry(tmp_path):
    cache = PreparationCache(tmp_path / "cache")

    def failing_save(value, folder):
        (folder / "value.json").write_text('{"sum": ')
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cache.get_or_compute(TOY, lambda: {"numbers": [40, 2]}, lambda: {"sum": 42}, failing_save)
    assert find_entries(tmp_path / "cache") == []  # no entry, and no temporary folder either

    [crashed] = start_workers(tmp_path, 1, crash=True)
    assert crashed.wait(timeout=60) == 3
    assert [entry.complete for entry in find_entries(tmp_path / "cache")] == [False]  # the crashed writer's folder
    assert cache.get_or_compute(TOY, lambda: {"numbers": [40, 2]}, lambda: {"sum": 42}) == {"sum": 42}
    assert cache.used["toy"].status == "computed"
    assert cache.get_or_compute(TOY, lambda: {"numbers": [40, 2]}, lambda: {"sum": 0}) == {"sum": 42}


def test_the_seed_is_in_a_key_exactly_where_the_stage_draws_from_it(tmp_path):
    cache = PreparationCache(tmp_path)
    seeded = Stage("seeded", 1, "a draw", seeded=True)
    assert cache.key(seeded, {"seed": 0}) != cache.key(seeded, {"seed": 1})
    with pytest.raises(ValueError, match="must hold it"):
        cache.key(seeded, {"numbers": [1]})
    with pytest.raises(ValueError, match="must not hold it"):
        cache.key(TOY, {"seed": 0})
    assert cache.key(TOY, {"a": 1, "b": 2}) == cache.key(TOY, {"b": 2, "a": 1}) != cache.key(Stage("toy", 2, "", False),
                                                                                            {"a": 1, "b": 2})


def test_a_model_in_memory_is_known_by_the_weights_its_embedding_reads(tiny_model_dir):
    import torch
    from sentence_transformers import SentenceTransformer

    from sentsweep.preparation_cache.digests import module_digest, unread_weights

    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    model.train()
    bert = model[0].auto_model
    assert unread_weights(model) == {f"0.{name}" for name, _ in model[0].named_parameters()
                                     if name.startswith(("auto_model.pooler.", "model.pooler."))} != set()
    assert model.training  # the probe runs in eval mode and gives the model back in its own
    before = module_digest(model)
    with torch.no_grad():
        bert.pooler.dense.weight.add_(1.0)  # mean pooling reads the token embeddings, never the pooler's output
    assert module_digest(model) == before
    with torch.no_grad():
        bert.encoder.layer[-1].output.dense.bias.add_(1e-3)
    assert module_digest(model) != before


def test_a_model_source_is_known_by_its_content_and_a_hub_model_without_a_revision_is_not_cached(tmp_path):
    from sentsweep.preparation_cache.digests import source_digest

    (tmp_path / "blob").write_text("weights")
    snapshot = tmp_path / "snapshot"  # as in the Hugging Face cache: the files are links to blobs
    snapshot.mkdir()
    (snapshot / "model.safetensors").symlink_to(tmp_path / "blob")
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "model.safetensors").write_text("weights")
    assert source_digest(str(snapshot)) == source_digest(str(copy))
    (tmp_path / "blob").write_text("weights, trained further")
    assert source_digest(str(snapshot)) != source_digest(str(copy))

    cache = PreparationCache(tmp_path / "cache")
    value = cache.get_or_compute(TOY, lambda: {"model": source_digest("nobody/no-such-model")}, lambda: {"sum": 42})
    assert value == {"sum": 42} and cache.used["toy"].key == ""
    assert cache.used["toy"].status.startswith("not cached: model 'nobody/no-such-model' is no local folder")
    assert not (tmp_path / "cache").exists()


def cache_cli(*argv: str) -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert cache_command(list(argv)) == 0
    return output.getvalue()


def test_prune_removes_entries_by_age_or_all_and_nothing_outside_the_cache(tmp_path):
    storage = tmp_path / "storage"
    cache = PreparationCache(storage / "cache")
    for number in range(3):
        value = {"number": number}
        cache.get_or_compute(TOY, lambda: value, lambda: value)  # noqa: B023 - called before the next round
    old = sorted((storage / "cache" / "toy").glob("*/manifest.json"))[0]
    os.utime(old, (time.time() - 3 * 86_400, time.time() - 3 * 86_400))
    keep = [storage / "ray-results.json", storage / "cache" / "notes.txt", storage / "cache" / "toy" / "notes.txt"]
    for path in keep:
        path.write_text("mine")
    outside = tmp_path / "outside"
    (outside / "0123456789abcdef0123456789abcdef").mkdir(parents=True)
    (outside / "0123456789abcdef0123456789abcdef" / "data").write_text("mine")
    (storage / "cache" / "linked").symlink_to(outside, target_is_directory=True)
    (storage / "cache" / "toy" / "fedcba9876543210fedcba9876543210").symlink_to(
        outside / "0123456789abcdef0123456789abcdef", target_is_directory=True)

    listed = cache_cli("list", "--storage-path", str(storage))
    assert listed.count("toy ") == 3 and "3 entries" in listed
    assert "removed 1 entries" in cache_cli("prune", "--storage-path", str(storage), "--older-than", "2")
    assert not old.exists() and len(find_entries(storage / "cache")) == 2
    assert "removed 2 entries" in cache_cli("prune", "--storage-path", str(storage), "--all")
    assert find_entries(storage / "cache") == [] and not list((storage / "cache" / "toy").glob("*.lock"))
    assert all(path.read_text() == "mine" for path in keep)
    assert (outside / "0123456789abcdef0123456789abcdef" / "data").read_text() == "mine"


def test_a_trials_run_names_the_cache_entries_it_used(tmp_path):
    from sentsweep.tracking.callback import SweepTracker

    uri = sqlite_store(tmp_path)
    tracker = SweepTracker(uri, "cache-tags", "gpl", tmp_path / "out")
    trial = SimpleNamespace(trial_id="t1", config={"method": "gpl", "seed": 0, "lr": 1e-3,
                                                   "preparation_cache": str(tmp_path / "cache")})
    tracker.on_trial_start(0, [trial], trial)
    tracker.on_trial_result(0, [trial], trial, {"step": 0, "sts_dev": 1.0, RESULT_KEY: {
        "gpl_queries": {"key": "a" * 32, "status": "hit"}, "gpl_teacher": {"key": "b" * 32, "status": "computed"},
        "untrained_evaluation": {"key": "", "status": "not cached: model 'x' has no snapshot"}}})
    assert tracker.finish()
    [run_] = MlflowClient(uri).search_runs([tracker.writer.experiment_id], "tags.ray_trial_id = 't1'")
    tags = run_.data.tags
    assert (tags["cache.gpl_queries"], tags["cache.gpl_queries.status"]) == ("a" * 32, "hit")
    assert (tags["cache.gpl_teacher"], tags["cache.gpl_teacher.status"]) == ("b" * 32, "computed")
    assert "cache.untrained_evaluation" not in tags
    assert tags["cache.untrained_evaluation.status"].startswith("not cached")
    assert "preparation_cache" not in run_.data.params  # where the cache is changes no result


def dry_run_card(*options: str) -> str:
    from sentsweep.experiments import get_experiment
    from sentsweep.sweep import run_sweep

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert run_sweep(get_experiment("gpl"), ["--dry-run", *options]) == 0
    return output.getvalue()


def test_the_card_lists_the_cached_stages_and_whether_the_seed_is_in_their_keys(tmp_path):
    card = dry_run_card("--storage-path", str(tmp_path))
    assert f"computed once per key and shared by the trials, in {tmp_path / 'cache'}" in card
    for stage, seeded in (("untrained_evaluation", "no"), ("gpl_queries", "yes"), ("gpl_negatives", "no"),
                          ("gpl_teacher", "yes"), ("gpl_margins", "no")):
        assert any(line.startswith(f"| gpl | {stage} |") and line.endswith(f"| {seeded} |")
                   for line in card.splitlines()), stage
    assert "| training | preparation_cache | " in card
    shared = dry_run_card("--storage-path", str(tmp_path), "--set", "preparation_seed=0")
    assert any(line.startswith("| gpl | gpl_queries |") and line.endswith("| preparation_seed 0, one for every trial |")
               for line in shared.splitlines())
    assert "off (--no-cache" in dry_run_card("--storage-path", str(tmp_path), "--no-cache")
    assert "off (--no-cache" in dry_run_card("--storage-path", "s3://bucket/sweeps")
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_a_second_sweep_loads_every_stage_the_first_computed(tmp_path, shared_ray):
    """The quick GPL sweep on the session's Ray, twice with one storage path: the trial of the second sweep finds every
    entry the first one's trial wrote, and each run's tags say so."""
    import ray

    from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
    from tests.sweep.test_sweep_end_to_end import load_sweep

    module = load_sweep(PROJECT / "sweeps" / "gpl.py")
    uri = sqlite_store(tmp_path)
    try:
        statuses = []
        for _ in range(2):
            with contextlib.redirect_stdout(io.StringIO()):
                assert module.run_sweep(module.DEFINITION, ["--quick", "--seeds", "1", "--tracking-uri", uri,
                                                            "--output-dir", str(tmp_path / "out")]) == 0
            [run_id] = fetch_trial_runs(uri, "gpl", latest_sweep_run_id(uri, "gpl"))["run_id"]
            tags = MlflowClient(uri).get_run(run_id).data.tags
            statuses.append({stage: tags[f"cache.{stage}.status"] for stage in GPL_STAGES})
            assert all(len(tags[f"cache.{stage}"]) == 32 for stage in GPL_STAGES)
    finally:
        ray.shutdown()
    assert statuses == [dict.fromkeys(GPL_STAGES, "computed"), dict.fromkeys(GPL_STAGES, "hit")]
    assert {entry.stage for entry in find_entries(tmp_path / "out" / "ray" / "cache")} == GPL_STAGES
