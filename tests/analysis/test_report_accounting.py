"""`sentsweep analyze report` on a quick nm_weight sweep accounts for every trial run: each is in the table (stage
1's methods, which have no w, in a column of their own) or counted as left out with its reason; the sweep prints one
line for its reproduction targets and writes their full list; the runs the committed example report is made of log
the params and metrics a sweep logs now."""

import pytest
import ray

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.report import run_account
from sentsweep.analysis.runs import fetch_sweep_runs, latest_sweep_run_id, run_artifact_text
from sentsweep.analysis.tables import build_table
from sentsweep.experiments import get_experiment
from sentsweep.sweep import run_sweep
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT
from tests.analysis.test_example_report import SCRIPT
from tests.helpers.cluster_helpers import sqlite_store

# the quick sweep cut to one pooling, one seed and 4 steps: 2 + 4 trials (stage 1: SimCSE, NM; stage 2: MLM + NM and
# TSDAE + NM at w 0.01 and 1)
CUT = ["--poolings", "mean", "--seeds", "1", "--max-steps", "4", "--eval-steps", "2", "--keep-models", "none"]


@pytest.mark.slow  # runs a sweep of 6 small trials
def test_analyze_report_on_a_quick_nm_weight_sweep_accounts_for_every_trial_run(tmp_path, capsys, shared_ray):
    uri = sqlite_store(tmp_path)
    try:
        code = run_sweep(get_experiment("nm_weight"), ["--quick", *CUT, "--tracking-uri", uri, "--output-dir",
                                                       str(tmp_path / "out")])
    finally:
        ray.shutdown()
    printed = capsys.readouterr().out
    assert code == 0, printed
    line = ("Reproduction targets: 8 of the sweep's 44 are cells of this stage; 0 measured; 8 need metrics this run "
            "did not evaluate (askubuntu_map, cqadupstack_map_at_100, twitterpara_ap, scidocs_map; add them with "
            "--eval-task NAME=PATH: askubuntu, cqadupstack, twitterpara, scidocs).")
    assert printed.count(line) == 2  # once per stage, under its table
    sweep = latest_sweep_run_id(uri, "nm_weight")
    listing = run_artifact_text(uri, sweep, TARGET_LIST_ARTIFACT)
    assert listing == (tmp_path / "out" / f"nm_weight-{sweep[:8]}-reproduction_targets.md").read_text()
    assert all(listing.count(f"| {metric} |") == 11 for metric in ("askubuntu_map", "cqadupstack_map_at_100",
                                                                   "twitterpara_ap", "scidocs_map"))

    report = tmp_path / "report.md"
    assert analysis_cli.main(["report", "--experiment", "nm_weight", "--tracking-uri", uri, "--rows", "method",
                              "pooling", "--columns", "w", "--lines", "method", "pooling", "--log-x", "--output",
                              str(report)]) == 0
    runs = fetch_sweep_runs(uri, "nm_weight")
    account = run_account(runs, "sts_test_at_best_dev", "w")
    assert account.total == len(runs) == 6 == account.in_table + sum(account.left_out.values())
    assert (account.unset, account.unset_stages) == (2, ("Table 6.10 rows",))
    text = report.read_text(encoding="utf-8")
    assert f"from 6 trial runs in MLflow (experiment `nm_weight`): {account.text('w')}." in " ".join(text.split())
    table = build_table(runs, ["method", "pooling"], ["sts_test_at_best_dev"], column_param="w")
    assert sum(cell.n for cell in table.cells.values()) == account.in_table  # each run in one cell
    assert [row for row in text.splitlines() if row.startswith("| nm | mean | – | – | ")]  # stage 1: column "no w"

    # the example report's runs (docs/example_report_runs.csv) have every param and metric its report reads
    example = SCRIPT.read_runs(SCRIPT.RUNS_CSV)
    read = {f"params.{name}" for name in ("method", "pooling", "w", "stage")} | {
        f"metrics.{name}" for name in ("sts_test_at_best_dev", "best_step", "total_steps", "system/cpu_seconds",
                                       "system/gpu_seconds", "system/wall_seconds")}  # bookkeeping under system/
    assert read <= set(runs.columns) and read <= set(example.columns)
