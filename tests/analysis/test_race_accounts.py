"""Both races of tsdae_deletion --quick, and the account of every run in the four places that give it: the terminal,
`sentsweep analyze report`, the sweep run's description and the configuration runs, read back through MLflow.

The race over steps is the fault matrix's uninterrupted `race-steps` sweep (run once per run of the suite); the race
over seeds is checked where tests/sweep/test_sweeps_quick.py runs it, before that test extends it."""

import pytest
from mlflow.tracking import MlflowClient

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.run_accounts import (
    configuration_accounts,
    race_section,
    run_accounts,
    stage_account,
)
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id

pytestmark = pytest.mark.slow  # reads a race over steps of 12 short trials, run once per run of the suite


def test_the_race_over_steps_gives_one_account_of_every_run_in_the_terminal_the_report_and_mlflow(
        tmp_path, computed_once, shared_ray):
    from tests.sweep.test_fault_matrix import SHAPES, uninterrupted

    reference = uninterrupted(SHAPES["race-steps"], computed_once, shared_ray)
    check_the_four_accounts(reference.uri, reference.log, tmp_path, "steps")


def check_the_four_accounts(uri: str, printed: str, folder, schedule: str) -> None:
    """The race of `schedule` whose sweep (the latest of experiment tsdae_deletion in `uri`) printed `printed`:
    one account of every run in the four places; the report is written to `folder`."""
    client = MlflowClient(uri)
    sweep = latest_sweep_run_id(uri, "tsdae_deletion")
    runs = fetch_trial_runs(uri, "tsdae_deletion", sweep)  # as MLflow holds them, the race's tags included
    account = stage_account(runs)
    assert account.startswith("Runs: ") and "Race over seeds (0, 1, 2):" in account
    # 1. the terminal and 2. the sweep run's description say the same as MLflow's runs
    assert account in printed
    assert account in client.get_run(sweep).data.tags["mlflow.note.content"]
    # 3. the report: the same count in its first line, the same race under its plot
    report = folder / f"{schedule}.md"
    assert analysis_cli.main(["report", "--experiment", "tsdae_deletion", "--tracking-uri", uri, "--rows", "pooling",
                              "--columns", "noise_ratio", "--output", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    counted = account.splitlines()[0].split(" trial runs: ", 1)[1].rstrip(".")
    assert f"from {len(runs)} trial runs in MLflow (experiment `tsdae_deletion`): {counted}." in " ".join(text.split())
    assert race_section(runs) in text
    # 4. each configuration run: its race decision, the seeds left out, its outcome and rank
    accounts = configuration_accounts(runs)
    configurations = {run.data.tags["config_hash"]: run for run in client.search_runs(
        [runs_experiment(client)], f"tags.configuration_of = '{sweep}'")}
    assert set(configurations) == set(accounts)
    for key, run in configurations.items():
        tags = run.data.tags
        assert tags["race"] == accounts[key].race and f"- race: {accounts[key].race}" in tags["mlflow.note.content"]
        assert tags["seeds_left_out"] == ("; ".join(accounts[key].left_out) or "none")
        assert tags["outcome"].startswith(accounts[key].standing)
    dropped = [key for key in accounts if accounts[key].dropped]
    ranks = {key: run.data.metrics["rank"] for key, run in configurations.items()}
    assert dropped and max(ranks[key] for key in accounts if key not in dropped) < min(ranks[key] for key in dropped)
    # a trial the race stopped reads so, not as a failure
    lines = run_accounts(runs)
    stopped = runs[lines["reason"].str.startswith("stopped by the race")]
    assert (len(stopped) > 0) == (schedule == "steps")
    for run_id in stopped["run_id"]:
        assert client.get_run(run_id).data.tags["mlflow.note.content"].startswith(
            "**in the table, stopped by the race at step ")


def runs_experiment(client) -> str:
    return client.get_experiment_by_name("tsdae_deletion").experiment_id
