"""Every sweep script's --quick mode finishes on the demo data, and its table can be printed again."""

import contextlib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.tracking.names import configuration_name
from tests.helpers.chromium import Chromium
from tests.helpers.cluster_helpers import folder_store
from tests.helpers.optuna_dashboard import OptunaDashboard, study_page
from tests.sweep.test_sweep_end_to_end import load_sweep

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

SWEEPS = Path(__file__).resolve().parents[2] / "sweeps"


@pytest.fixture()
def workdir(tmp_path, shared_ray):
    """The test's folder (its MLflow store, its sweeps' output); the sweeps join the session's Ray (tests/conftest.py),
    so the tests of this file can run on any worker of a parallel run."""
    return tmp_path


def run_quick(name, workdir, *extra):
    module = load_sweep(SWEEPS / f"{name}.py")
    uri = folder_store(workdir)  # a test's second sweep: the same store
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = module.run_sweep(
            module.DEFINITION, ["--quick", "--tracking-uri", uri, "--output-dir", str(workdir / "out"), *extra]
        )
    assert code == 0, output.getvalue()
    return uri, output.getvalue()


BEST_DEV = "sts_test_at_best_dev | best_sts_dev"
BY_VALIDATION_LOSS = "sts_test_at_best_validation_loss | best_sts_dev"


@pytest.mark.parametrize(
    "name, extra, group_by, metrics, rows",
    [
        ("nm_weight", ["--no-table-rows"], ["method", "w", "pooling"], BEST_DEV, 8),
        ("multitask_weight", ["--no-baselines"], ["method", "w"], BY_VALIDATION_LOSS, 4),
        ("sample_size", [], ["method", "sample_size"], BEST_DEV, 4),
        ("batch_size", [], ["method", "batch_size"], BY_VALIDATION_LOSS, 2),
        ("learning_rate", [], ["method", "lr"], BEST_DEV, 4),
        ("augsbert", [], ["teacher", "sampling"], BEST_DEV, 4),
        ("cross_bi_encoder", ["--no-activations"], ["teacher"], BEST_DEV, 2),
        ("gpl", [], ["queries_per_passage"], BEST_DEV, 1),
    ],
)
def test_quick_sweep_prints_its_table_and_analysis_reprints_it(workdir, capsys, name, extra, group_by, metrics, rows):
    uri, printed = run_quick(name, workdir, *extra)
    header = "| " + " | ".join(group_by) + f" | {metrics} |"
    assert header in printed
    assert "Runs left out: none" in printed
    capsys.readouterr()
    assert analysis_cli.main(["table", "--experiment", name, "--tracking-uri", uri, "--rows", *group_by,
                              "--metrics", *metrics.split(" | ")]) == 0
    table = capsys.readouterr().out
    body = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(body) == rows
    assert all(line in printed for line in body)  # the analysis command reproduces the sweep's own table
    if name == "augsbert":  # each trial's silver scores reach MLflow, for the density plots of Reiml (2023) Fig. 6.3
        runs = fetch_trial_runs(uri, name, latest_sweep_run_id(uri, name))
        client = MlflowClient(uri)
        assert all("silver_scores.json" in {item.path for item in client.list_artifacts(run_id)}
                   for run_id in runs["run_id"])


def test_greedy_search_carries_each_stage_best_into_the_next(computed_once, shared_ray):
    """tsdae_noise --quick with one seed and 20 steps: the fault matrix's uninterrupted `greedy` sweep (run once per
    run of the suite)."""
    from tests.sweep.test_fault_matrix import SHAPES, uninterrupted

    reference = uninterrupted(SHAPES["greedy"], computed_once, shared_ray)
    printed, runs = reference.log, fetch_trial_runs(reference.uri, "tsdae_noise",
                                                    latest_sweep_run_id(reference.uri, "tsdae_noise"))
    stages = ["noise_type", "noise_ratio", "pooling", "tie_decoder"]
    assert set(runs["params.stage"]) == set(stages)
    for earlier, later in zip(stages, stages[1:]):
        done = runs[runs["params.stage"] == earlier]
        means = done.groupby(f"params.{earlier}")["metrics.best_sts_dev"].mean()
        best = means.idxmax() if earlier != "pooling" else "cls"  # the paper's choice (--pooling-rule paper)
        used = set(runs[runs["params.stage"] == later][f"params.{earlier}"])
        assert used == {best}, (earlier, means, used)
    assert printed.count("best on dev") == 4 and printed.count("kept instead: {'pooling': 'cls'}") == 1


def test_optuna_search_repeats_each_sampled_config_over_the_seeds(workdir):
    uri, printed = run_quick("learning_rate", workdir, "--search", "optuna", "--num-configs", "3",
                             "--methods", "simcse", "nm")
    client = MlflowClient(uri)
    runs = fetch_trial_runs(uri, "learning_rate", latest_sweep_run_id(uri, "learning_rate"))
    assert len(runs) == 3 * 2
    by_config = runs.groupby("config_hash")["seed"].apply(sorted)
    assert len(by_config) == 3 and all(seeds == ["0", "1"] for seeds in by_config)
    lrs = runs["params.lr"].astype(float)
    assert ((lrs >= 1e-6) & (lrs <= 1e-3)).all()
    assert client.get_experiment_by_name("learning_rate") is not None
    sweep_params = client.get_run(latest_sweep_run_id(uri, "learning_rate")).data.params
    assert (sweep_params["search"], sweep_params["num_configs"], sweep_params["sampler"]) == ("optuna", "3", "tpe")
    # exported as an Optuna study, optuna-dashboard shows one trial per configuration and the best seed mean
    journal = workdir / "learning_rate.journal"
    assert analysis_cli.main(["to-optuna", "--experiment", "learning_rate", "--tracking-uri", uri,
                              "--output", str(journal)]) == 0
    best_mean = runs.groupby("config_hash")["metrics.sts_test_at_best_dev"].mean().max()
    with OptunaDashboard(journal) as dashboard, Chromium() as browser:
        trials, best = study_page(browser, dashboard)
    assert trials == 3 and best == pytest.approx(best_mean, rel=1e-9)


def test_labelled_intersection_quick_reports_its_answer_on_the_sweep_run(workdir):
    uri, printed = run_quick("labelled_intersection", workdir)
    answer = int(printed.split("intersection: ")[1].split(" labelled pairs")[0])
    parent = latest_sweep_run_id(uri, "labelled_intersection")
    assert MlflowClient(uri).get_run(parent).data.metrics["intersection_labelled_pairs"] == answer
    runs = fetch_trial_runs(uri, "labelled_intersection", parent)
    assert set(runs["params.method"]) == {"tsdae", "sbert"}
    probed = {int(n) for n in runs.loc[runs["params.method"] == "sbert", "params.sample_size"]}
    assert answer in probed and f"{answer}: " in printed


def test_independent_stages_each_print_a_table_and_carry_nothing_over(workdir):
    """multitask_weight's stages are the rows of one table (Wang (2022) Table 5.16), not a greedy search."""
    uri, printed = run_quick("multitask_weight", workdir, "--methods", "simcse+clm_ae", "--weights", "0.1",
                             "--seeds", "1")
    for title in ("stage 1/3 'SimCSE alone'", "stage 2/3 'auto-encoders alone'", "stage 3/3 'multi-task'"):
        assert title in printed
    assert "best on dev" not in printed
    runs = fetch_trial_runs(uri, "multitask_weight", latest_sweep_run_id(uri, "multitask_weight"))
    by_stage = runs.groupby("params.stage")
    assert set(by_stage.get_group("SimCSE alone")["params.epochs"]) == {"1", "3"}
    assert set(by_stage.get_group("auto-encoders alone")["params.method"]) == {"clm_ae", "mlm_ae"}
    multitask = by_stage.get_group("multi-task")
    assert set(multitask["params.method"]) == {"simcse+clm_ae"} and set(multitask["params.epochs"]) == {"1"}
    assert set(runs["params.select_checkpoint"]) == {"validation_loss"}


def test_a_race_gives_further_seeds_only_to_contenders_and_extend_runs_only_the_missing_trials(workdir):
    short = ["--max-steps", "20", "--eval-steps", "10"]
    uri, printed = run_quick("tsdae_deletion", workdir, "--race", "--seeds", "3", *short)
    parent = latest_sweep_run_id(uri, "tsdae_deletion")
    runs = fetch_trial_runs(uri, "tsdae_deletion", parent)
    seeds_of = runs.groupby("config_hash")["seed"].apply(lambda seeds: sorted(seeds))
    assert len(seeds_of) == 4 and all(seeds[:2] == ["0", "1"] for seeds in seeds_of)  # the same seed ids for all
    status = [line for line in printed.splitlines() if line.startswith("- noise_ratio=")]
    assert len(status) == 4 and "Race over seeds (0, 1, 2):" in printed
    seeds_in = [int(re.search(r"(?:after|at the maximum of) (\d+) seeds", line).group(1)) for line in status]
    assert sorted(seeds_in) == sorted(map(len, seeds_of))
    best = [line for line in status if ": best mean of " in line]
    assert len(best) == 1 and f"ran to the end after {max(map(len, seeds_of))} seeds: " in best[0]
    assert json.loads(MlflowClient(uri).get_run(parent).data.tags["race"]) == {
        "seeds": [0, 1, 2], "initial_seeds": 2, "alpha": 0.2, "correction": "holm", "max_trials": None,
        "test": "pooled t", "tolerance": 0.0, "schedule": "async"}
    raced = configurations_equal_the_table(uri, parent, printed)
    for line in status:  # each configuration's run tells how the race decided it, as printed
        label, decision = line[2:].split(": ", 1)
        assert raced[label].data.tags["race"] == decision
    # the account of every run in the terminal, the report and MLflow (tests/analysis/test_race_accounts.py), before
    # --extend
    from tests.analysis.test_race_accounts import check_the_four_accounts

    check_the_four_accounts(uri, printed, workdir, "async")

    uri, printed = run_quick("tsdae_deletion", workdir, "--extend", "--seeds", "3", *short)
    extended = fetch_trial_runs(uri, "tsdae_deletion", parent)
    assert f"--extend: {len(runs)} of the stage's 12 trials finished before, {12 - len(runs)} to run" in printed
    assert len(extended) == 12 and not extended.duplicated(["config_hash", "seed"]).any()
    assert latest_sweep_run_id(uri, "tsdae_deletion") == parent  # the new trials joined the sweep's run
    extended_runs = configurations_equal_the_table(uri, parent, printed)
    assert {name: run.info.run_id for name, run in extended_runs.items()} == {
        name: run.info.run_id for name, run in raced.items()}  # the same configuration runs, updated
    assert {run.data.tags["race"] for run in extended_runs.values()} == {"not raced"}


def configurations_equal_the_table(uri, parent, printed) -> dict:
    """Each configuration run's mean (at the table's 2 decimals) and n of every table metric equal its row's cells:
    in the sweep run's table artifact, and as printed. Returns the configuration runs by name."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("tsdae_deletion").experiment_id
    runs = {run.info.run_name: run for run in client.search_runs([experiment], f"tags.configuration_of = '{parent}'")}
    table = json.loads(Path(client.download_artifacts(parent, "tables/01-tsdae_deletion.json")).read_text())
    cells = pd.DataFrame(table["data"], columns=table["columns"])
    assert len(runs) == cells[["noise_ratio", "pooling"]].drop_duplicates().shape[0]
    rows = [line for line in printed.split("sweep run ")[-1].splitlines() if line.startswith("| 0.")]
    for cell in cells.itertuples():
        run = runs[configuration_name({"noise_ratio": cell.noise_ratio, "pooling": cell.pooling})]
        assert run.data.metrics[f"{cell.metric}_mean"] == round(cell.mean, 2)  # at the table's precision
        assert run.data.metrics[f"{cell.metric}_n"] == cell.n
        (row,) = [row for row in rows if row.startswith(f"| {cell.noise_ratio} | {cell.pooling} |")]
        assert f"{cell.mean:.2f} ± " in row
    return runs


def test_domain_adaptation_quick_chains_the_nli_step_into_the_sts_step_in_both_orders(workdir):
    """TSDAE §5.1: NLI (MNRL) then STS-B (MSE), as Table 2's NLI+STS step, before and after the target domain."""
    uri, printed = run_quick("domain_adaptation", workdir)
    stages = ["nli", "nli_sts", "nli_sts_then_target", "target", "target_then_nli", "target_then_nli_sts"]
    for index, stage in enumerate(stages, start=1):
        assert f"stage {index}/6 '{stage}'" in printed
    runs = fetch_trial_runs(uri, "domain_adaptation", latest_sweep_run_id(uri, "domain_adaptation"))
    by_stage = {stage: runs[runs["params.stage"] == stage].set_index("seed") for stage in stages}
    assert set(by_stage["nli"]["params.method"]) == set(by_stage["target_then_nli"]["params.method"]) == {"sbert_nli"}
    assert set(by_stage["nli_sts"]["params.method"]) == {"sbert"}
    for child, parent in (("nli_sts", "nli"), ("nli_sts_then_target", "nli_sts"), ("target_then_nli", "target"),
                          ("target_then_nli_sts", "target_then_nli")):
        assert sorted(by_stage[child].index) == ["0", "1"], child
        for seed in by_stage[child].index:  # each seed continues the same seed's model of the stage before
            assert by_stage[child].loc[seed, "parent_model_run_id"] == by_stage[parent].loc[seed, "run_id"], child


def test_topic_distillation_runs_each_stage_of_000_tables_6_14_to_6_17(workdir):
    """Reiml 2023 Tables 6.14-6.17 in one command: each stage prints its table; every trial finished, the prompted stage
    with the prompt shown and hidden."""
    uri, printed = run_quick("topic_distillation", workdir, "--seeds", "1")
    for index, title in enumerate(("pretrained", "classifier", "prompted", "original"), start=1):
        assert f"stage {index}/4 '{title}'" in printed
    runs = fetch_trial_runs(uri, "topic_distillation", latest_sweep_run_id(uri, "topic_distillation"))
    assert set(runs["status"]) == {"FINISHED"}
    assert set(runs["params.stage"]) == {"pretrained", "classifier", "prompted", "original"}
    prompted = runs[runs["params.stage"] == "prompted"]
    assert len(set(prompted["params.topic_prompt"])) == 2


def test_tsdae_main_trains_one_model_per_target_task_and_checks_its_column_only(workdir):
    """TSDAE §4.1: "For unsupervised training, we just use the sentences from the training split" of each task: with
    two --eval-task's and their --task-corpus, each trial trains on its task's corpus, is scored on that task alone
    and is checked against that task's Table 2 cell; Table 2's BM25 and BERT-base-uncased rows run per task too."""
    from sentsweep.analysis.reproduction import UNMEASURED, check_targets
    from sentsweep.experiments.tsdae.tsdae_main import DEFINITION
    from tests.experiments.test_resolved_trials import cqadupstack_folder
    from tests.tasks.test_tasks import askubuntu_folder

    data = workdir / "useb"
    options = []
    for task, folder in (("askubuntu", askubuntu_folder(data)), ("cqadupstack", cqadupstack_folder(data))):
        corpus = data / f"{task}_train.txt"
        corpus.write_text("".join(f"{task} title {i}\n" for i in range(60)))
        options += ["--eval-task", f"{task}={folder}", "--task-corpus", f"{task}={corpus}"]
    uri, printed = run_quick("tsdae_main", workdir, "--methods", "tsdae", "--seeds", "1", "--experiment", "per_task",
                             *options)
    runs = fetch_trial_runs(uri, "per_task", latest_sweep_run_id(uri, "per_task"))
    assert len(runs) == (1 + 2) * 2  # (tsdae + 2 baselines) x 2 tasks, one seed
    for _, run in runs.iterrows():
        task = run["params.target_task"]
        if run["params.method"] == "tsdae":
            assert run["params.corpus"] == str(data / f"{task}_train.txt")
        else:  # BM25 and the model as released train on no corpus: their runs record none (their task: target_task)
            assert run["params.corpus"] != run["params.corpus"]  # nan
        assert json.loads(run["params.eval_tasks"]) == {task: str(data / task)}
        other = "cqadupstack_map_at_100" if task == "askubuntu" else "askubuntu_map"
        assert run.get(f"metrics.{other}") is None or run[f"metrics.{other}"] != run[f"metrics.{other}"]  # nan
    measured = {(check.target.params["method"], check.target.params["target_task"]) for check in
                check_targets(runs, DEFINITION.published) if check.verdict not in UNMEASURED}
    assert measured == {(method, task) for method in ("tsdae", "bm25", "frozen_encoder")
                        for task in ("askubuntu", "cqadupstack")}
    assert "| tsdae | askubuntu |" in printed and "| bm25 | cqadupstack |" in printed


def test_tsdae_initialisation_trains_t5s_own_encoder_and_decoder_on_a_target_task(workdir):
    """TSDAE §8, Table 4 ("T5-base"): --quick --checkpoint T5-base trains TSDAE with a tiny random T5's own encoder
    and decoder (untied) on the task's corpus; the trial's params, its training loss and its task score come back
    through MLflow, and the row's two cells of that task are measured."""
    from sentsweep.analysis.reproduction import UNMEASURED, check_targets
    from sentsweep.experiments.tsdae.tsdae_initialisation import DEFINITION
    from tests.tasks.test_tasks import askubuntu_folder

    corpus = workdir / "askubuntu_train.txt"
    corpus.write_text("".join(f"askubuntu title {i}\n" for i in range(60)))
    uri, printed = run_quick("tsdae_initialisation", workdir, "--checkpoint", "T5-base", "--keep-models", "none",
                             "--seeds", "1", "--experiment", "t5", "--eval-task",
                             f"askubuntu={askubuntu_folder(workdir / 'useb')}", "--task-corpus", f"askubuntu={corpus}")
    runs = fetch_trial_runs(uri, "t5", latest_sweep_run_id(uri, "t5"))
    assert len(runs) == 1
    run = runs.iloc[0]
    assert (run["params.checkpoint"], run["params.tie_decoder"], run["params.initialisation"]) == ("T5-base", "False",
                                                                                                  "checkpoint")
    assert run["params.model"] == str(workdir / "out" / "tiny-t5")
    assert run["metrics.train_loss"] > 0 and 0 <= run["metrics.askubuntu_map"] <= 100
    measured = {check.target.metric for check in check_targets(runs, DEFINITION.published)
                if check.verdict not in UNMEASURED}
    assert measured == {"askubuntu_map", "train_loss"}
