"""The quick TSDAE deletion sweep, end to end on local Ray and a SQLite MLflow store."""

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import ray
from mlflow.tracking import MlflowClient

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.reproduction import UNMEASURED
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id, run_artifact_text
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT
from sentsweep.tracking.models import SELECTION_METRICS
from sentsweep.tracking.names import configuration_name, logged_model_name
from tests.helpers.chromium import Chromium
from tests.helpers.cluster_helpers import sqlite_store
from tests.helpers.mlflow_ui import MlflowUi, configuration_rows, open_printed_link, printed_link, sweep_run_page
from tests.helpers.record_levels import assert_every_level_agrees

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

SWEEP_SCRIPT = Path(__file__).resolve().parents[2] / "sweeps" / "tsdae_deletion.py"


def load_sweep(path=SWEEP_SCRIPT):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory, session_ray):
    """Run `sweeps/tsdae_deletion.py --quick` once, on the session's Ray; yield (tracking uri, parent run id, printed
    output)."""
    workdir = tmp_path_factory.mktemp("quick-sweep")
    uri = sqlite_store(workdir)
    module = load_sweep()
    import contextlib
    import io

    pools = workdir / "pools.jsonl"
    pools.write_text("".join(
        json.dumps({"query": f"a cat sat {i}",
                    "candidates": ["a cat sat on the mat", "stocks fell", "rain"][: 2 + i % 2],
                    "positive": 0}) + "\n" for i in range(6)), encoding="utf-8")
    output = io.StringIO()
    with contextlib.redirect_stdout(output), pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_ADDRESS", session_ray.address)
        code = module.run_sweep(
            module.DEFINITION, ["--quick", "--tracking-uri", uri, "--output-dir", str(workdir / "out"),
                                "--eval-task", f"distractors={pools}"]
        )
        ray.shutdown()
    assert code == 0, output.getvalue()
    yield uri, latest_sweep_run_id(uri, "tsdae_deletion"), output.getvalue()


def child_runs(uri, parent):
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("tsdae_deletion")
    return client.search_runs([experiment.experiment_id], f"tags.sweep_run_id = '{parent}'")


def test_every_trial_has_exactly_one_finished_run_with_params_tags_and_curve(quick_sweep):
    uri, parent, _ = quick_sweep
    runs = child_runs(uri, parent)
    assert len(runs) == 2 * 2 * 2
    assert len({r.data.tags["ray_trial_id"] for r in runs}) == 8
    assert {(r.data.params["noise_ratio"], r.data.params["pooling"], r.data.params["seed"]) for r in runs} == {
        (ratio, pooling, seed) for ratio in ("0.3", "0.6") for pooling in ("mean", "max") for seed in ("0", "1")
    }
    client = MlflowClient(uri)
    for run in runs:  # a child of its configuration's run, a child of the sweep's: named by what it is
        assert run.info.status == "FINISHED"
        configuration = client.get_run(run.data.tags["mlflow.parentRunId"])
        assert configuration.data.tags["mlflow.parentRunId"] == parent
        assert configuration.data.tags["config_hash"] == run.data.tags["config_hash"]
        assert configuration.info.run_name == (f"noise_ratio={run.data.params['noise_ratio']} "
                                               f"pooling={run.data.params['pooling']}")
        assert run.info.run_name == f"{configuration.info.run_name} · seed {run.data.params['seed']}"
        for tag in ("sweep", "method", "seed", "config_hash", "code_version"):
            assert run.data.tags[tag]
        history = client.get_metric_history(run.info.run_id, "sts_dev")
        assert sorted(m.step for m in history) == [0, 10, 20, 30, 40, 50, 60]
    hashes = {}
    for run in runs:
        hashes.setdefault((run.data.params["noise_ratio"], run.data.params["pooling"]), set()).add(
            run.data.tags["config_hash"]
        )
    assert all(len(h) == 1 for h in hashes.values())  # seeds of one config share it
    assert len(set().union(*hashes.values())) == 4  # configs differ


def test_the_sweep_and_configuration_runs_record_what_their_trials_resolved_read_and_ran_on(quick_sweep):
    uri, parent, _ = quick_sweep
    sweep, configurations, trials = assert_every_level_agrees(uri, "tsdae_deletion", parent)
    assert len(configurations) == 4 and len(trials) == 8
    assert all(len(configuration.data.params) >= 30 for configuration in configurations)  # every resolved setting


def test_a_finished_stage_keeps_only_each_trials_last_checkpoint(quick_sweep):
    """Ray Tune keeps two checkpoints per trial while the stage runs (sentsweep.sweep.execution.stage_tune: a resume
    must find the one its saved state names); once the stage has ended only the last of each trial is left."""
    uri, _, _ = quick_sweep
    trial_folders = list((Path(uri.removeprefix("sqlite:///")).parent / "out" / "ray").glob("*/train_*"))
    assert len(trial_folders) == 8
    for folder in trial_folders:  # 7 evaluations, each a checkpoint
        assert [path.name for path in folder.glob("checkpoint_*")] == ["checkpoint_000006"], folder


def plain(text: str) -> str:
    """A printed table without its best-marking (bold and the group mark ≈) and the selected steps in parentheses."""
    return re.sub(r" \((?:untrained|step)[^)]*\)", "", text.replace("**", "").replace("≈", ""))


def test_printed_table_equals_a_direct_computation_from_the_runs(quick_sweep):
    uri, parent, printed = quick_sweep
    runs = child_runs(uri, parent)
    best_dev = max(
        np.mean([r.data.metrics["best_sts_dev"] for r in runs
                 if (r.data.params["noise_ratio"], r.data.params["pooling"]) == key])
        for key in {(r.data.params["noise_ratio"], r.data.params["pooling"]) for r in runs}
    )
    for ratio in ("0.3", "0.6"):
        for pooling in ("mean", "max"):
            cell = [r for r in runs if (r.data.params["noise_ratio"], r.data.params["pooling"]) == (ratio, pooling)]
            values = np.array([r.data.metrics["sts_test_at_best_dev"] for r in cell])
            dev = np.array([r.data.metrics["best_sts_dev"] for r in cell])
            row = (
                f"| {ratio} | {pooling} | {values.mean():.2f} ± {values.std(ddof=1):.2f} | "
                f"{dev.mean():.2f} ± {dev.std(ddof=1):.2f} |"
            )
            assert row in plain(printed)
            if dev.mean() == best_dev:
                assert f"**{dev.mean():.2f} ± {dev.std(ddof=1):.2f}**" in printed  # best per column in bold
    assert "n=2 unless shown" in printed


def test_analysis_command_reproduces_the_table_and_writes_csv_and_latex(quick_sweep, tmp_path, capsys):
    uri, parent, printed = quick_sweep
    csv_path, latex_path = tmp_path / "table.csv", tmp_path / "table.tex"
    code = analysis_cli.main(
        ["table", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--rows", "noise_ratio", "pooling",
         "--csv", str(csv_path), "--latex", str(latex_path)]
    )
    assert code == 0
    out = capsys.readouterr().out
    table_lines = [line for line in out.splitlines() if line.startswith("| 0.")]
    assert len(table_lines) == 4 and all(line in printed for line in table_lines)
    import pandas as pd

    frame = pd.read_csv(csv_path)
    runs = child_runs(uri, parent)
    for _, row in frame.iterrows():
        cell = [
            r.data.metrics[row["metric"]]
            for r in runs
            if float(r.data.params["noise_ratio"]) == row["noise_ratio"] and r.data.params["pooling"] == row["pooling"]
        ]
        assert row["mean"] == pytest.approx(np.mean(cell), abs=1e-9)
        assert row["std"] == pytest.approx(np.std(cell, ddof=1), abs=1e-9)
        assert row["n"] == 2
    latex = latex_path.read_text(encoding="utf-8")
    assert "\\toprule" in latex and "\\bottomrule" in latex and "$\\pm$" in latex and "\\textbf{" in latex
    assert "Runs left out: none" in out


def test_untrained_baseline_is_printed_and_logged_on_the_sweep_run(quick_sweep):
    uri, parent, printed = quick_sweep
    metrics = MlflowClient(uri).get_run(parent).data.metrics
    assert f"test {metrics['untrained_sts_test']:.2f}" in printed


def test_evaluation_task_is_scored_once_per_trial_with_per_query_outcomes_and_shown_in_the_table(quick_sweep):
    uri, parent, printed = quick_sweep
    client = MlflowClient(uri)
    for run in child_runs(uri, parent):
        assert [m.step for m in client.get_metric_history(run.info.run_id, "distractors_top1")] == [60]
        assert run.data.metrics["distractors_chance"] == pytest.approx(100 * (1 / 2 + 1 / 3) / 2)
        per_query = json.loads(Path(client.download_artifacts(run.info.run_id, "per_query.json")).read_text())
        assert len(per_query["distractors_top1"]) == 6
        assert run.data.metrics["distractors_top1"] == pytest.approx(100 * np.mean(per_query["distractors_top1"]))
        assert run.data.tags["selected_on"].startswith("best_sts_dev (stsb dev split of ")
    header = next(line for line in printed.splitlines() if line.startswith("| noise_ratio"))
    assert "distractors_top1" in header


def test_compare_over_queries_pairs_the_per_query_outcomes_of_shared_seeds(quick_sweep, capsys):
    from scipy import stats

    uri, parent, _ = quick_sweep
    code = analysis_cli.main(["compare", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--per-query",
                              "--metric", "distractors_top1", "--first", "noise_ratio=0.3", "pooling=mean",
                              "--second", "noise_ratio=0.6", "pooling=mean"])
    assert code == 0
    out = capsys.readouterr().out
    assert "paired t over items (6 items, seeds 0, 1)" in out
    client = MlflowClient(uri)
    outcomes = {}
    for run in child_runs(uri, parent):
        if run.data.params["pooling"] == "mean":
            path = client.download_artifacts(run.info.run_id, "per_query.json")
            outcomes.setdefault(run.data.params["noise_ratio"], []).append(
                json.loads(Path(path).read_text())["distractors_top1"])
    first, second = (np.mean(outcomes[ratio], axis=0) for ratio in ("0.3", "0.6"))
    expected = stats.ttest_rel(first, second)
    if np.isfinite(expected.statistic):
        assert f"t = {expected.statistic:.3f}, p = {expected.pvalue:.4f}" in out
    else:  # the two configurations got every query equally right: no difference to test
        assert "t = nan" in out


def test_the_best_configurations_models_reload_with_the_test_score_mlflow_recorded(quick_sweep, tmp_path):
    from sentence_transformers import SentenceTransformer

    from sentsweep.analysis.model_registry import main as models
    from sentsweep.data import read_scored_pairs
    from sentsweep.demo_data import DEMO_DIR
    from sentsweep.tasks.sts import StsEvaluator

    uri, parent, _ = quick_sweep
    runs = fetch_trial_runs(uri, "tsdae_deletion", parent)
    kept = runs[runs["logged_model_id"].notna()]
    best = runs.groupby("config_hash")["metrics.best_sts_dev"].mean().idxmax()
    assert set(kept["config_hash"]) == {best} and sorted(kept["seed"]) == ["0", "1"]  # --keep-models best
    test = StsEvaluator(read_scored_pairs(DEMO_DIR / "sts-test.csv"))
    client = MlflowClient(uri)
    for _, run in kept.iterrows():  # named by configuration and seed, as the run
        model = client.get_logged_model(run["logged_model_id"])
        trial = client.get_run(run["run_id"])
        assert model.name == logged_model_name(trial.info.run_name)
        # its metrics are its trial's selection (the run's final values), once each: none of the untrained model's
        selection = {key: trial.data.metrics[key] for key in SELECTION_METRICS if key in trial.data.metrics}
        assert {"best_sts_dev", "sts_test_at_best_dev", "best_step"} <= set(selection)
        assert sorted((metric.key, metric.value) for metric in model.metrics) == sorted(selection.items())
        assert [output.model_id for output in trial.outputs.model_outputs] == [model.model_id]
        folder = tmp_path / run["run_id"]
        assert models(["export", f"runs:/{run['run_id']}/model", str(folder), "--tracking-uri", uri]) == 0
        reloaded = SentenceTransformer(str(folder), device="cpu")
        assert test(reloaded) == pytest.approx(run["metrics.sts_test_at_best_dev"], abs=1e-4)
    assert models(["export", f"runs:/{kept.iloc[0]['run_id']}/model", str(folder), "--tracking-uri", uri]) == 2


def test_registered_versions_carry_the_tables_cells_of_the_best_configuration(quick_sweep):
    from sentsweep.analysis.model_registry import register_best
    from sentsweep.analysis.tables import build_table, to_markdown

    uri, parent, _ = quick_sweep
    versions = register_best(uri, "tsdae_deletion", parent, name="tsdae-deletion-best")
    runs = fetch_trial_runs(uri, "tsdae_deletion", parent)
    table = build_table(runs, ["noise_ratio", "pooling"], ["sts_test_at_best_dev", "best_sts_dev"])
    best = table.best["best_sts_dev"]
    client = MlflowClient(uri)
    assert sorted(version.seed for version in versions) == [0, 1]
    for version in versions:
        tags = client.get_model_version("tsdae-deletion-best", version.version).tags
        for metric in ("sts_test_at_best_dev", "best_sts_dev"):
            assert tags[f"table.{metric}"] == table.cells[(best, metric)].mean_std_text()
            assert f"{tags[f'table.{metric}']}" in to_markdown(table)  # the very text the table prints
            assert tags[f"table.{metric}.n"] == "2"
        assert tags["configuration"] == f"noise_ratio={best[0]}, pooling={best[1]}"


def test_the_report_checks_the_published_values_the_sweep_logged(quick_sweep, tmp_path):
    """The sweep logs the targets it declares (TSDAE App. A) on its run; the report reads them from there and
    gives the same verdicts as the sweep's list of its targets (its artifact; the sweep prints one line per stage)."""
    uri, parent, printed = quick_sweep
    output = tmp_path / "report.md"
    code = analysis_cli.main(["report", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--rows",
                              "pooling", "--columns", "noise_ratio", "--metric", "best_sts_dev", "--output",
                              str(output)])
    assert code == 0
    report = output.read_text(encoding="utf-8")
    listing = run_artifact_text(uri, parent, TARGET_LIST_ARTIFACT)
    stage = listing.split("\n## Cells no stage of this run holds")[0]  # the stage's targets, not those outside its grid
    verdicts = [line for line in stage.splitlines() if line.startswith("| noise_ratio=")
                and not line.endswith(tuple(f"| {verdict} |" for verdict in UNMEASURED))]  # the cells measured
    assert len(verdicts) == 2 and all(line in report for line in verdicts)  # mean and max at 0.6 (TSDAE Table 7)
    assert "11 published values: outside 2, not run 9." in report


def test_the_printed_link_opens_on_the_configurations_best_first_in_a_real_browser(quick_sweep, tmp_path):
    """MLflow 3.17's UI (`mlflow ui` on the sweep's store) in headless Chromium: the printed link shows, without a
    click, the configuration runs by name with their mean selection metric, best first, as the table ranks them;
    the sweep's run page shows the final table and its best configuration."""
    uri, parent, printed = quick_sweep
    client = MlflowClient(uri)
    path = client.download_artifacts(parent, "tables/01-tsdae_deletion.json", str(tmp_path))
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = pd.DataFrame(table["data"], columns=table["columns"])
    ranked = cells[cells["metric"] == "best_sts_dev"].sort_values("mean", ascending=False)
    link = printed_link(printed)
    with MlflowUi(uri) as ui, Chromium() as browser:
        open_printed_link(browser, ui, link)
        rows = configuration_rows(browser, len(ranked))
        assert [row["name"] for row in rows] == [configuration_name({"noise_ratio": line.noise_ratio,
                                                                     "pooling": line.pooling})
                                                 for line in ranked.itertuples()]
        # at the table's precision
        assert [float(row["metrics.`best_sts_dev_mean`"]) for row in rows] == ranked["mean"].round(2).tolist()
        assert [int(row["metrics.`best_sts_dev_n`"]) for row in rows] == ranked["n"].tolist()

        experiment_id = re.search(r"#/experiments/(\d+)/", link).group(1)
        page = sweep_run_page(browser, ui, experiment_id, parent, "Best on best_sts_dev")
    final = printed.split("sweep run ")[1].split("\n\n")[1]  # the printed table's lines
    for line in final.splitlines()[2:]:  # the rendered Markdown table: its cells, tab-separated, bold as text
        assert "\t".join(cell.strip() for cell in line.replace("**", "").strip("|").split("|")) in page
    best = ranked.iloc[0]
    assert (f"Best on best_sts_dev (mean over 2 seeds): {configuration_name(dict(best[['noise_ratio', 'pooling']]))}"
            f": best_sts_dev {best['mean']:.2f} ± {best['std']:.2f}") in page
