"""The configuration level of a sweep in MLflow, written by the sweep's tracker into a SQLite store (no Ray): three
levels of runs named by what they are, configuration runs whose statistics follow the trials and end equal to the
table's cells, the sweep's run leading with the answer, saved views that select and sort the configurations as the
table does, and analysis that reads the trials as before."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.runs import fetch_trial_runs
from sentsweep.analysis.tables import build_table, seed_statistics, to_frame, to_markdown
from sentsweep.sweep.execution.stage_run import log_configurations
from sentsweep.tracking.callback import SweepTracker
from sentsweep.tracking.names import (
    BOOKKEEPING_METRICS,
    logged_model_name,
    mlflow_metric_key,
    statistic_key,
    trial_run_name,
)
from sentsweep.tracking.store import experiment_page
from sentsweep.tracking.sweep_run import SweepRecord
from sentsweep.tracking.views import VIEW_TAG_PREFIX
from sentsweep.trainables.compute import COMPUTE_METRICS, TIMING_METRICS
from tests.helpers.chromium import Chromium
from tests.helpers.cluster_helpers import PROJECT, sqlite_store
from tests.helpers.mlflow_ui import (
    MlflowUi,
    artifact_page_rows,
    close_assistant,
    configuration_rows,
    open_printed_link,
    sweep_run_page,
)

# noise_ratio x pooling, seeds 0-2: 0.3/mean best; 0.6/mean's seed 2 fails.
SCORES = {(0.3, "mean"): [60.0, 61.0, 62.5], (0.6, "mean"): [58.0, 57.5, None], (0.3, "cls"): [40.0, 45.0, 42.0]}
STAGE = "deletion_ratio x pooling"


def trial(number: int, ratio: float, pooling: str, seed: int, score: float | None, stage: str | None = None):
    config = dict(method="tsdae", noise_ratio=ratio, pooling=pooling, seed=seed, lr=1e-3) | (
        {"stage": stage} if stage else {})
    result = {"step": 10, "total_steps": 10, "best_step": 10, "seconds_per_step": 0.5}
    if score is not None:
        result |= {"best_sts_dev": score, "sts_test_at_best_dev": score - 2}
    return SimpleNamespace(trial_id=f"t{number}{stage or ''}", config=config, error_file=None, last_result=result,
                           status="RUNNING")


def new_tracker(store: str, experiment: str, folder: Path) -> SweepTracker:
    argv, sys.argv = sys.argv, [str(PROJECT / "sweeps" / "tsdae_deletion.py")]
    try:
        return SweepTracker(store, experiment, "tsdae_deletion", folder / "out")
    finally:
        sys.argv = argv


def log_a_stage(tracker: SweepTracker, folder: Path, scores: dict, title: str, stage: str | None = None):
    """A stage of `scores` {(noise_ratio, pooling): [score of seed 0, 1, ...]} logged as a sweep logs it (a None
    score: a failed seed); (its table, its trial runs, a configuration's run read after its first two seeds)."""
    tracker.begin_stage(["noise_ratio", "pooling"], ["sts_test_at_best_dev", "best_sts_dev"], "best_sts_dev",
                        seed_statistics, stage)
    cells = [(ratio, pooling, seed, score) for (ratio, pooling), scores in scores.items()
             for seed, score in enumerate(scores)]
    trials = [trial(number, *cell, stage=stage) for number, cell in enumerate(cells)]
    interim = None
    for index, current in enumerate(trials):
        tracker.on_trial_start(0, trials, current)
        tracker.on_trial_result(0, trials, current, current.last_result)
        if current.last_result.get("best_sts_dev") is None:
            current.error_file = str(folder / "error.txt")
            Path(current.error_file).write_text("Traceback ...\nValueError: the loss is nan")
            tracker.on_trial_error(0, trials, current)
            current.status = "ERROR"
        else:
            tracker.on_trial_complete(0, trials, current)
            current.status = "TERMINATED"
        if index == 1:  # two seeds of the first configuration finished
            tracker.writer.flush()
            first = f"noise_ratio={cells[0][0]} pooling={cells[0][1]}"
            interim = configuration_runs(tracker.writer.tracking_uri, tracker.parent_run_id)[first]
    tracker.writer.flush()
    store = tracker.writer.tracking_uri
    runs = fetch_trial_runs(store, MlflowClient(store).get_experiment(tracker.writer.experiment_id).name,
                            tracker.parent_run_id)
    if stage is not None:
        runs = runs[runs["params.stage"] == stage]
    table = build_table(runs, ["noise_ratio", "pooling"], ["sts_test_at_best_dev", "best_sts_dev"])
    log_configurations(tracker, title, table, runs, "", "", "best_sts_dev")
    return table, runs, interim


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A stage of SCORES logged as a sweep logs it, its statistics read after the first two seeds and at the end."""
    folder = tmp_path_factory.mktemp("configurations")
    store = sqlite_store(folder)
    tracker = new_tracker(store, "configurations", folder)
    table, runs, interim = log_a_stage(tracker, folder, SCORES, STAGE)
    assert tracker.finish()
    return SimpleNamespace(store=store, tracker=tracker, table=table, runs=runs, interim=interim)


# A sweep of two stages: the second's configurations are the answer the printed link opens on.
SECOND_STAGE = {(0.1, "mean"): [50.0, 51.0], (0.2, "mean"): [55.0, 56.5], (0.2, "cls"): [30.0, 31.0]}


@pytest.fixture(scope="module")
def two_stages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two-stages")
    store = sqlite_store(folder)
    tracker = new_tracker(store, "two stages", folder)
    first = log_a_stage(tracker, folder, SCORES, "stage 1/2 'baselines'", "baselines")[0]
    second = log_a_stage(tracker, folder, SECOND_STAGE, "stage 2/2 'grid'", "grid")[0]
    assert tracker.finish()
    return SimpleNamespace(store=store, tracker=tracker, tables={"baselines": first, "grid": second})


def configuration_runs(store: str, sweep_run_id: str) -> dict:
    """{run name: run} of the sweep's configuration runs."""
    client = MlflowClient(store)
    experiment = client.get_run(sweep_run_id).info.experiment_id
    return {run.info.run_name: run for run in client.search_runs(
        [experiment], f"tags.configuration_of = '{sweep_run_id}'")}


def ranked(table) -> list[str]:
    """A table's configurations by name, best first on best_sts_dev."""
    rows = sorted({row for row, _ in table.cells}, key=lambda row: -table.cells[(row, "best_sts_dev")].mean)
    return [f"noise_ratio={ratio} pooling={pooling}" for ratio, pooling in rows]


def view_state(store: str, key: str) -> tuple[str, dict, dict]:
    """(experiment id, envelope, state) of a saved view."""
    client = MlflowClient(store)
    experiment = next(experiment for experiment in client.search_experiments()
                      if VIEW_TAG_PREFIX + key in experiment.tags)
    envelope = json.loads(experiment.tags[VIEW_TAG_PREFIX + key])
    return experiment.experiment_id, envelope, json.loads(envelope["state"])


def runs_of_view(store: str, key: str) -> list:
    """The runs a saved view shows, in its order: its search filter and sort, run by the store."""
    experiment, _, state = view_state(store, key)
    return MlflowClient(store).search_runs(
        [experiment], state["searchFilter"],
        order_by=[f"{state['orderByKey']} {'ASC' if state['orderByAsc'] else 'DESC'}"])


def test_three_levels_of_runs_named_by_what_they_are(logged):
    client = MlflowClient(logged.store)
    configurations = configuration_runs(logged.store, logged.tracker.parent_run_id)
    assert set(configurations) == {"noise_ratio=0.3 pooling=mean", "noise_ratio=0.6 pooling=mean",
                                   "noise_ratio=0.3 pooling=cls"}
    for name, run in configurations.items():
        assert run.data.tags["mlflow.parentRunId"] == logged.tracker.parent_run_id
        assert run.info.status == "FINISHED"
        assert run.data.params["noise_ratio"] in name and "seed" not in run.data.params
    for _, row in logged.runs.iterrows():
        run = client.get_run(row["run_id"])
        parent = client.get_run(run.data.tags["mlflow.parentRunId"])
        assert parent.data.tags["config_hash"] == row["config_hash"]
        assert run.info.run_name == f"{parent.info.run_name} · seed {row['seed']}"
        if row["status"] == "FINISHED":  # bookkeeping apart, under system/; the selection metrics by their names
            assert "system/seconds_per_step" in run.data.metrics and "seconds_per_step" not in run.data.metrics
            assert {"best_sts_dev", "best_step"} <= set(run.data.metrics)


def test_statistics_follow_the_trials_and_end_equal_to_the_tables_cells(logged):
    """At the table's precision (2 decimals; the trials keep the exact values); an interval that needs 3 seeds is
    not logged below them, so that no chart shows an empty series."""
    assert logged.interim.data.metrics["best_sts_dev_n"] == 2  # two of three seeds finished by then
    assert logged.interim.data.metrics["best_sts_dev_mean"] == 60.5
    assert "best_sts_dev_ci95_low" not in logged.interim.data.metrics
    configurations = configuration_runs(logged.store, logged.tracker.parent_run_id)
    for (row, metric), cell in logged.table.cells.items():
        run = configurations[f"noise_ratio={row[0]} pooling={row[1]}"]
        expected = seed_statistics(cell.values)
        for statistic, value in expected.items():
            key = statistic_key(metric, statistic)
            if math.isnan(value):
                assert key not in run.data.metrics, (row, key)
            else:
                assert run.data.metrics[key] == round(value, 2), (row, key)
    assert configurations["noise_ratio=0.3 pooling=mean"].data.metrics["best_sts_dev_mean"] == 61.17  # 61.1666...
    assert configurations["noise_ratio=0.6 pooling=mean"].data.metrics["best_sts_dev_n"] == 2


def test_a_configuration_runs_description_says_its_standing_n_group_and_seeds(logged):
    configurations = configuration_runs(logged.store, logged.tracker.parent_run_id)
    best, failed = (configurations[name].data.tags["mlflow.note.content"] for name in (
        "noise_ratio=0.3 pooling=mean", "noise_ratio=0.6 pooling=mean"))
    first, details, table = best.split("\n\n")
    assert first == "**best** on best_sts_dev: **61.17 ± 1.26**, n = 3 (seeds 0, 1, 2)"
    assert details.splitlines()[0] == ("- group: in the best's significance group on best_sts_dev (alpha = 0.05, "
                                       "correction: holm): best on best_sts_dev (mean over 3 seeds)")
    sweep = logged.tracker.parent_run_id
    experiment = configurations["noise_ratio=0.3 pooling=mean"].info.experiment_id
    assert "- race: not raced" in details and "- seeds left out: none" in details
    assert f"(#/experiments/{experiment}/runs/{sweep}?workflowType=machine_learning)" in details
    assert table.splitlines()[2] == "| sts_test_at_best_dev | 59.17 ± 1.26 | 3 | [58.00, 60.50] | best |"
    group = logged.table.groups["best_sts_dev"].members[(0.6, "mean")]
    word = "not significantly worse than the best" if group.in_best_group else "significantly worse than the best"
    assert failed.startswith(f"**{word}** on best_sts_dev: **57.75 ± 0.35**, n = 2 (seeds 0, 1)")
    assert "- seeds left out: seed 2: failed (ValueError: the loss is nan)" in failed
    assert "| best_sts_dev | 57.75 ± 0.35 | 2 | n/a (fewer than 3 seeds) |" in failed


def test_standing_and_the_seeds_left_out_are_tags(logged):
    configurations = configuration_runs(logged.store, logged.tracker.parent_run_id)
    best, failed, worse = (configurations[name].data.tags for name in (
        "noise_ratio=0.3 pooling=mean", "noise_ratio=0.6 pooling=mean", "noise_ratio=0.3 pooling=cls"))
    assert best["standing"] == "best on best_sts_dev (mean over 3 seeds)"
    assert failed["seeds_left_out"] == "seed 2: failed (ValueError: the loss is nan)"
    assert best["seeds_left_out"] == "none"
    assert best["outcome"] == failed["outcome"] == "ran to the end"  # not raced
    group = logged.table.groups["best_sts_dev"].members[(0.3, "cls")]
    in_words = "within the best's significance group" if group.in_best_group else "significantly worse than the best"
    assert worse["standing"].startswith(f"{in_words} on best_sts_dev (Holm-adjusted p = "
                                        f"{round(group.p_adjusted, 4)}, paired t over seeds")


def test_the_sweep_run_leads_with_the_answer_and_carries_the_table(logged, tmp_path):
    client = MlflowClient(logged.store)
    sweep = client.get_run(logged.tracker.parent_run_id)
    description = sweep.data.tags["mlflow.note.content"]
    assert description.startswith(f"## {STAGE}\n\n{to_markdown(logged.table)}\n\n**Best on best_sts_dev** (mean over "
                                  "3 seeds): **noise_ratio=0.3 pooling=mean**: best_sts_dev 61.17 ± 1.26")
    assert sweep.data.tags["best_configuration"] == "noise_ratio=0.3 pooling=mean"
    assert sweep.data.metrics["best_sts_dev_mean"] == 61.17  # 61.1666...: at the table's precision
    path = client.download_artifacts(sweep.info.run_id, "tables/01-deletion_ratio_x_pooling.json", str(tmp_path))
    artifact = json.loads(Path(path).read_text())
    frame = pd.DataFrame(artifact["data"], columns=artifact["columns"])
    expected = to_frame(logged.table)
    assert frame[["noise_ratio", "pooling", "metric", "n"]].values.tolist() == \
        expected[["noise_ratio", "pooling", "metric", "n"]].values.tolist()
    assert frame["mean"].tolist() == pytest.approx(expected["mean"].tolist())
    assert {"path": "tables/01-deletion_ratio_x_pooling.json", "type": "table"} in json.loads(
        sweep.data.tags["mlflow.loggedArtifacts"])


def test_the_sweep_run_carries_its_table_as_a_page_with_its_marks(logged, tmp_path):
    """The table as HTML, which MLflow's Artifacts tab renders: each row's cells as the printed table's, the best in
    bold; the description links it in the model-training layout."""
    client = MlflowClient(logged.store)
    sweep = client.get_run(logged.tracker.parent_run_id)
    path = client.download_artifacts(sweep.info.run_id, "tables/01-deletion_ratio_x_pooling.html", str(tmp_path))
    page = Path(path).read_text(encoding="utf-8")
    rows = re.findall(r"<tr>(.*?)</tr>", page)
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in rows]
    printed = [[cell.strip() for cell in line.strip("|").split("|")]
               for line in to_markdown(logged.table).split("\n\n")[0].splitlines() if not line.startswith("|---")]
    assert [[cell.replace("<b>", "**").replace("</b>", "**") for cell in row] for row in cells] == printed
    assert any("<b>" in cell for row in cells for cell in row)
    experiment = sweep.info.experiment_id
    assert (f"[tables/01-deletion_ratio_x_pooling.html](#/experiments/{experiment}/runs/{sweep.info.run_id}/artifacts/"
            "tables/01-deletion_ratio_x_pooling.html?workflowType=machine_learning)") in sweep.data.tags[
        "mlflow.note.content"]


def test_the_saved_view_selects_the_configurations_and_sorts_them_as_the_table(logged):
    """The printed link's view, as MLflow's runs page applies it: its search filter and sort, run by the store."""
    assert logged.tracker.view_key == logged.tracker.parent_run_id  # a sweep of one stage: its configurations
    assert [run.info.run_name for run in runs_of_view(logged.store, logged.tracker.view_key)] == ranked(logged.table)
    _, _, state = view_state(logged.store, logged.tracker.view_key)
    assert "metrics.`best_sts_dev_mean`" in state["selectedColumns"]
    assert state["compareRunCharts"][0]["selectedParams"] == ["noise_ratio", "pooling"]
    assert shareable_keys() >= set(state)  # keys the installed UI takes from a shared view


def test_each_stage_has_its_view_and_the_printed_link_opens_the_final_stages(two_stages):
    """In a sweep of stages the printed view is the final stage's configurations, best first, the stage its first
    column; each stage has its own view, named by the stage; the sweep's run names the printed one."""
    tracker, store = two_stages.tracker, two_stages.store
    parent = tracker.parent_run_id
    assert tracker.view_key == f"{parent}-stage-grid"
    assert MlflowClient(store).get_run(parent).data.tags["answer_view"] == tracker.view_key
    for stage, table in two_stages.tables.items():
        key = f"{parent}-stage-{stage}"
        runs = runs_of_view(store, key)
        assert [run.info.run_name for run in runs] == ranked(table)
        assert {run.data.tags["stage"] for run in runs} == {stage}
        _, envelope, state = view_state(store, key)
        assert envelope["name"] == f"{tracker.run_name}: stage '{stage}', best first"
        assert state["selectedColumns"][:3] == ["params.`stage`", "tags.`outcome`", "metrics.`best_sts_dev_mean`"]
        assert shareable_keys() >= set(state)
    everything = runs_of_view(store, parent)  # the sweep's configurations of every stage, also saved
    assert len(everything) == len(SCORES) + len(SECOND_STAGE)


@pytest.fixture(scope="module")
def ui_in_a_browser(two_stages):
    """MLflow's UI over the two stages' store and one headless Chromium, started once for the widths it is read at
    (each test sets its width before it opens a page)."""
    with MlflowUi(two_stages.store) as ui, Chromium(height=900) as browser:
        yield ui, browser


@pytest.mark.slow  # starts MLflow's UI and Chromium
@pytest.mark.parametrize("width", [1280, 1600])
def test_the_printed_view_a_configuration_page_and_the_table_page_in_a_real_browser(two_stages, ui_in_a_browser,
                                                                                     width):
    """MLflow 3.17's UI in headless Chromium at laptop and desktop widths: the printed link opens on the final
    stage's configurations, best first, with the stage and the selection metric's mean, std and n shown at the
    table's precision; the best configuration's page leads with its description; the sweep's Artifacts tab renders
    the final table with its marks."""
    tracker, store = two_stages.tracker, two_stages.store
    experiment, final = tracker.writer.experiment_id, two_stages.tables["grid"]
    names = ranked(final)
    ui, browser = ui_in_a_browser
    browser.set_viewport(width, 900)
    open_printed_link(browser, ui, experiment_page("http://127.0.0.1:5000", experiment, tracker.view_key))
    configuration_rows(browser, len(names))
    close_assistant(browser)  # it opens by itself on a browser's first visit: closed, as its user would
    rows = configuration_rows(browser, len(names), columns=("params.`stage`", "metrics.`best_sts_dev_n`"))
    assert [row["name"] for row in rows] == names
    assert {row["params.`stage`"] for row in rows} == {"grid"}
    means = [round(seed_statistics(final.cells[(row, "best_sts_dev")].values)["mean"], 2)
             for row in sorted({row for row, _ in final.cells},
                               key=lambda row: -final.cells[(row, "best_sts_dev")].mean)]
    assert [float(row["metrics.`best_sts_dev_mean`"]) for row in rows] == means
    assert [row["metrics.`best_sts_dev_n`"] for row in rows] == ["2"] * len(names)

    best = configuration_runs(store, tracker.parent_run_id)[names[0]]
    page = sweep_run_page(browser, ui, experiment, best.info.run_id, "significance group")
    assert "best on best_sts_dev: 55.75 ± 1.06, n = 2 (seeds 0, 1)" in page

    cells = artifact_page_rows(browser, ui, experiment, tracker.parent_run_id, "tables/02-stage_2_2_grid.html")
    printed = [[cell.strip().replace("**", "") for cell in line.strip("|").split("|")]
               for line in to_markdown(final).split("\n\n")[0].splitlines() if not line.startswith("|---")]
    assert cells == printed


def shareable_keys() -> set[str]:
    """The view state keys MLflow's installed UI takes from a saved view: its search facets and UI state lists."""
    import mlflow

    bundle = Path(mlflow.__file__).parent / "server" / "js" / "build" / "static" / "js"
    text = "".join(path.read_text(encoding="utf-8", errors="replace") for path in bundle.glob("*.js"))
    lists = re.findall(r'\["searchFilter","orderByKey",[^\]]*\]|\["selectedColumns",[^\]]*\]', text)
    return {key for found in lists for key in json.loads(found)}


def test_analysis_reads_the_trials_as_before(logged, capsys):
    assert len(logged.runs) == 9 and logged.runs["status"].value_counts().to_dict() == {"FINISHED": 8, "FAILED": 1}
    assert analysis_cli.main(["table", "--experiment", "configurations", "--tracking-uri", logged.store, "--rows",
                              "noise_ratio", "pooling", "--metrics", "sts_test_at_best_dev", "best_sts_dev"]) == 0
    assert to_markdown(logged.table) in capsys.readouterr().out


def test_bookkeeping_metrics_are_logged_under_system_and_models_by_name():
    assert BOOKKEEPING_METRICS == set(TIMING_METRICS) | set(COMPUTE_METRICS) | {"mlflow_write_seconds"}
    assert {mlflow_metric_key(name) for name in BOOKKEEPING_METRICS} == {f"system/{n}" for n in BOOKKEEPING_METRICS}
    assert mlflow_metric_key("best_sts_dev") == "best_sts_dev" and mlflow_metric_key("sts_dev") == "sts_dev"
    from mlflow.utils.validation import _validate_logged_model_name

    name = logged_model_name("noise_ratio=0.3 pooling=mean model=/data/m.v2:1 · seed 1")
    _validate_logged_model_name(name)  # MLflow accepts it
    assert name == "seed 1 · noise_ratio=0p3 pooling=mean model=|data|m_v2-1"  # the seed first, decimals readable
    assert logged_model_name(trial_run_name("method=mlm+nm w=1.0 lr=0.0001 pooling=mean", 2)) == (
        "seed 2 · method=mlm+nm w=1p0 lr=0p0001 pooling=mean")
    assert logged_model_name("a run named by hand") == "a run named by hand"


def test_a_driver_that_ran_none_of_the_trials_sets_the_same_rows_on_the_same_runs(logged, tmp_path):
    """An --extend whose trials had all finished before: its driver reopens the sweep's run and the configuration
    runs (found by their tags), and writes the table's rows again, no operation refused."""
    before = configuration_runs(logged.store, logged.tracker.parent_run_id)
    argv, sys.argv = sys.argv, [str(PROJECT / "sweeps" / "tsdae_deletion.py")]
    try:
        extended = SweepTracker(logged.store, "configurations", "tsdae_deletion", tmp_path / "out", extend=True)
    finally:
        sys.argv = argv
    assert extended.parent_run_id == logged.tracker.parent_run_id
    extended.begin_stage(["noise_ratio", "pooling"], ["sts_test_at_best_dev", "best_sts_dev"], "best_sts_dev",
                         seed_statistics)
    log_configurations(extended, STAGE, logged.table, logged.runs, "", "", "best_sts_dev")
    assert extended.finish()
    assert not list((tmp_path / "out").glob("*.rejected.jsonl"))
    after = configuration_runs(logged.store, logged.tracker.parent_run_id)
    assert {name: run.info.run_id for name, run in after.items()} == {
        name: run.info.run_id for name, run in before.items()}
    for name, run in after.items():
        assert run.info.status == "FINISHED"
        assert run.data.metrics == pytest.approx(before[name].data.metrics, nan_ok=True)


def test_a_description_over_mlflows_tag_size_links_what_it_cuts_to_its_artifact():
    """Each part is whole while the tag's size allows, the final stage's answer first; a part cut is its best
    line and a link to the artifact that holds it whole."""
    operations = []
    writer = SimpleNamespace(submit=operations.append, experiment_id="7", parent_run_id="abc")
    record = SweepRecord(writer, tag_limit=900)
    cells = pd.DataFrame([{"x": 1, "metric": "m", "mean": 1.0, "std": 0.1, "n": 2, "ci95_low": None,
                           "ci95_high": None, "best": True}])
    record.log_stage("stage 1", "| x | m |\n|---|---|\n| 1 | 1.00 |\n" + "a" * 600, cells, ["x"], "m",
                     reproduction="## Reproduction targets\n\n" + "r" * 100)
    record.log_stage("stage 2", "| x | m |\n|---|---|\n| 1 | 1.00 |", cells, ["x"], "m")
    description = operations[-1]["value"]
    assert len(description) <= 900 and description == record.description()
    final, earlier, targets = description.split("\n\n## ")
    assert final.startswith("## stage 2\n\n| x | m |") and final.endswith(  # whole
        "**x=1**: m 1.00 ± 0.10\n\nThe table as a page: [tables/02-stage_2.html](#/experiments/7/runs/abc/artifacts/"
        "tables/02-stage_2.html?workflowType=machine_learning)")
    assert earlier == ("stage 1\n\n**Best on m** (mean over 2 seeds): **x=1**: m 1.00 ± 0.10\n\n(whole in the run's "
                       "artifacts: [tables/01-stage_1.md](#/experiments/7/runs/abc/artifacts/tables/01-stage_1.md"
                       "?workflowType=machine_learning))")
    assert targets == "Reproduction targets\n\n" + "r" * 100


def test_the_sweep_runs_params_of_a_combined_method_are_keys_mlflow_takes(tmp_path):
    """nm_weight's methods are combined (`tsdae+nm`): their settings' param key reads '+' as ' plus ', which MLflow
    takes (its keys refuse '+': the sweep run's params were rejected whole, into the .rejected.jsonl file)."""
    from sentsweep.tracking.sweep_run import experiment_params

    params = experiment_params([("method x w", {"method": ["tsdae+nm", "simcse"], "w": [0.1, 1.0]})], [0, 1], {},
                               {"tsdae+nm": {"noise_ratio": 0.6}, "simcse": {"temperature": 0.05}}, {"search": "grid"})
    assert params["method_settings.tsdae plus nm"] == '{"noise_ratio": 0.6}'
    assert params["method_settings.simcse"] == '{"temperature": 0.05}'
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = client.create_run(client.create_experiment("keys")).info.run_id
    from mlflow.entities import Param

    client.log_batch(run, params=[Param(key, value) for key, value in params.items()])
    assert client.get_run(run).data.params == params


def test_the_view_of_every_stage_charts_the_axes_all_stages_sweep_and_says_so():
    """MLflow draws no line for a configuration without one of a parallel coordinates chart's axes: the view of
    every stage's configurations charts the shared axes (NM's stage 1 has no w), each stage's view its own."""
    from sentsweep.tracking.views import sweep_views

    views = {key: (name, state) for key, name, state in sweep_views(
        "s", "nm", "best_sts_dev", ["best_sts_dev"], ["stage", "method", "pooling", "w"], "grid",
        ["method", "pooling", "w"], ["method", "pooling"])}
    name, state = views["s"]
    assert state["compareRunCharts"][0]["selectedParams"] == ["method", "pooling"]
    assert name == ("nm: configurations of all stages, best first (parallel coordinates on method, pooling: each "
                    "stage's own in its view)")
    assert views["s-stage-grid"][1]["compareRunCharts"][0]["selectedParams"] == ["method", "pooling", "w"]
    assert views["s-stage-grid"][1]["orderByKey"] == "metrics.`rank`" and views["s-stage-grid"][1]["orderByAsc"]
