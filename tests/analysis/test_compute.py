"""Compute accounting: what a trial records, how a budget ends a sweep, the compute per cell."""

from __future__ import annotations

import pickle
import re
import sys
from types import SimpleNamespace

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.cli import main as analyze
from sentsweep.analysis.compute import compute_by_cell, compute_markdown
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.errors import InputError
from sentsweep.sweep.config.option_checks import check_budget_options, check_option_bounds
from sentsweep.sweep.config.options import SweepOptions, parse_options
from sentsweep.sweep.execution.budget import BudgetWatch, SweepBudget, budget_watch_named
from sentsweep.trainables.compute import Compute, ComputeMeter, read_compute, write_compute
from tests.helpers.cluster_helpers import sqlite_store


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_meter_counts_cpu_wall_and_the_gpu_fraction_held_on_top_of_earlier_attempts():
    wall, cpu = Clock(100.0), Clock(7.0)
    meter = ComputeMeter(0.25, wall_clock=wall, cpu_clock=cpu)
    wall.now, cpu.now = 140.0, 37.0
    assert meter.total() == Compute(cpu_seconds=30.0, gpu_seconds=10.0, wall_seconds=40.0)
    meter.resume(Compute(cpu_seconds=5.0, gpu_seconds=2.0, wall_seconds=8.0))  # a restored trial
    assert meter.total() == Compute(cpu_seconds=35.0, gpu_seconds=12.0, wall_seconds=48.0)
    assert ComputeMeter(0.0, wall_clock=wall, cpu_clock=cpu).total().gpu_seconds == 0.0  # on CPU


def test_a_checkpoint_keeps_the_compute_and_one_without_it_holds_none(tmp_path):
    spent = Compute(cpu_seconds=1.5, gpu_seconds=0.5, wall_seconds=2.0)
    write_compute(tmp_path, spent)
    assert read_compute(tmp_path) == spent
    assert read_compute(tmp_path / "elsewhere") == Compute()


def test_the_process_cpu_clock_advances_with_work():
    from sentsweep.trainables.compute import process_cpu_seconds

    before = process_cpu_seconds()
    sum(i * i for i in range(2_000_000))
    assert process_cpu_seconds() > before


def test_budget_options_are_parsed_and_bad_values_refused_naming_them():
    options = parse_options(SweepOptions, ["--time-budget", "60", "--gpu-hours", "1.5", "--gpus-per-trial", "0.5"])
    assert (options.time_budget, options.gpu_hours) == (60.0, 1.5)
    for bad, message in (({"time_budget": 0.0}, "--time-budget 0.0: must be > 0"),
                         ({"gpu_hours": -1.0}, "--gpu-hours -1.0: must be > 0")):
        with pytest.raises(InputError, match=re.escape(message)):
            check_option_bounds(SweepOptions(**bad))
    with pytest.raises(InputError, match=re.escape("--gpu-hours 2 with --gpus-per-trial 0: the trials hold no GPU")):
        check_budget_options(None, 2.0, 0.0)
    check_budget_options(None, 2.0, "auto")


def test_the_time_budget_is_spent_after_its_seconds():
    clock = Clock()
    budget = SweepBudget(60.0, None, 0.0, clock=clock)
    clock.now = 59.0
    assert budget.spent() is None
    clock.now = 61.0
    assert budget.spent() == "--time-budget 60: the sweep ran 61 s"


def test_gpu_hours_count_each_running_trial_its_fraction():
    clock = Clock()
    budget = SweepBudget(None, 1.0, 0.5, clock=clock)
    clock.now = 1800.0
    budget.spend(running_trials=2)  # two half-GPU trials for half an hour: 0.5 GPU-hours
    assert budget.gpu_seconds == 1800.0 and budget.spent() is None
    clock.now = 3600.0
    budget.spend(running_trials=4)
    assert budget.spent() == "--gpu-hours 1: the trials held 1.500 GPU-hours (0.5 GPU each)"


def test_a_watch_interrupts_once_when_spent_and_restores_as_this_process_watch():
    clock, interrupts = Clock(), []
    watch = BudgetWatch("run-budget", SweepBudget(10.0, None, 0.0, clock=clock), interrupt=lambda: interrupts.append(1))
    trials = [SimpleNamespace(status=status) for status in ("RUNNING", "PENDING", "TERMINATED")]
    watch.on_step_begin(0, trials)
    assert watch.message is None and not interrupts
    clock.now = 11.0
    watch.on_step_begin(1, trials)
    watch.on_step_begin(2, trials)
    assert interrupts == [1]
    assert watch.message == ("--time-budget 10: the sweep ran 11 s; 2 trial(s) of this stage unfinished, stopped at "
                             "their last checkpoint")
    assert pickle.loads(pickle.dumps(watch)) is watch
    never = budget_watch_named("run-without-a-watch")
    never.on_step_begin(0, trials)
    assert never.message is None


def test_compute_per_cell_adds_up_to_the_runs_total():
    runs = pd.DataFrame({
        "params.method": ["tsdae", "tsdae", "mlm", "mlm"],
        "params.w": ["0.1", "0.1", "0.1", None],
        "metrics.system/cpu_seconds": [3600.0, 1800.0, 720.0, None],
        "metrics.system/gpu_seconds": [0.0, 0.0, 360.0, None],
        "metrics.system/wall_seconds": [7200.0, 3600.0, 360.0, None],
    })
    table = compute_by_cell(runs, ["method", "w"])
    cells = table.set_index(["method", "w"])
    assert cells.loc[("tsdae", "0.1"), "cpu h"] == 1.5 and cells.loc[("mlm", "0.1"), "gpu h"] == 0.1
    assert cells.loc[("mlm", "-"), "runs without compute"] == 1
    total = table.iloc[-1]
    assert total["method"] == "total" and total["runs"] == 4 and total["cpu h"] == pytest.approx(1.7)
    assert table.iloc[:-1][["cpu h", "gpu h", "wall h"]].sum().tolist() == pytest.approx(
        total[["cpu h", "gpu h", "wall h"]].tolist())
    assert "| total |  | 4 | 1 | 1.7000 | 0.1000 | 3.1000 |" in compute_markdown(table)
    with pytest.raises(InputError, match="runs have no param 'pooling'"):
        compute_by_cell(runs, ["pooling"])


@pytest.mark.slow
def test_a_time_budget_stops_the_quick_nm_grid_and_resume_completes_it(tmp_path, monkeypatch, capsys, shared_ray):
    """--time-budget stops the sweep midway (resumable, the resume command printed); --resume runs what was left,
    each (configuration, seed) FINISHED once; `analyze table --compute` sums the runs' recorded compute."""
    import ray

    from sentsweep.experiments.reiml_2023.nm_weight import DEFINITION
    from sentsweep.sweep import run_sweep

    monkeypatch.setattr(sys, "argv", [__file__])  # MLflow's source tags, as the other in-process sweeps
    monkeypatch.chdir(tmp_path)
    uri = sqlite_store(tmp_path)
    arguments = ["--quick", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"), "--no-table-rows",
                 "--poolings", "cls", "--methods", "tsdae+nm", "--weights", "0.01", "1.0", "--seeds", "2",
                 "--max-steps", "300", "--eval-steps", "100"]
    # 4 trials on 2 slots, each longer than the budget (9.4 and 10.2 s, two at a time on this machine's 2 cores): the
    # budget ends the sweep before its second pair of trials can finish, on a machine up to 3 times faster; the resume
    # trains the rest
    try:
        assert run_sweep(DEFINITION, [*arguments, "--time-budget", "6"]) == 1
    finally:
        ray.shutdown()
    error = capsys.readouterr().err
    assert re.search(r"error: --time-budget 6: the sweep ran \d+ s; \d+ trial\(s\) of this stage unfinished, "
                     r"stopped at their last checkpoint\ntheir MLflow runs and the sweep's ended KILLED\nresume with:\n"
                     r"  .* --resume\n", error), error
    parent = latest_sweep_run_id(uri, "nm_weight")
    assert MlflowClient(uri).get_run(parent).info.status == "KILLED"
    stopped = fetch_trial_runs(uri, "nm_weight", parent)
    assert not len(stopped) or (stopped["status"] == "FINISHED").sum() < 4  # stopped midway

    try:
        assert run_sweep(DEFINITION, [*arguments, "--resume"]) == 0, capsys.readouterr().err
    finally:
        ray.shutdown()
    runs = fetch_trial_runs(uri, "nm_weight", parent)
    finished = runs[runs["status"] == "FINISHED"]
    assert len(finished) == 4 and not finished.duplicated(["config_hash", "seed"]).any()
    assert (finished["metrics.system/wall_seconds"] > 0).all() and (finished["metrics.system/cpu_seconds"] > 0).all()
    assert (finished["metrics.system/gpu_seconds"] == 0).all()  # on CPU

    capsys.readouterr()
    assert analyze(["table", "--experiment", "nm_weight", "--tracking-uri", uri, "--rows", "method", "w",
                    "--compute"]) == 0
    total = re.search(r"\| total \|  \| (\d+) \| \d+ \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", capsys.readouterr().out)
    assert total, "no total line"
    assert int(total[1]) == len(runs)
    for column, metric in zip((2, 3, 4), ("cpu_seconds", "gpu_seconds", "wall_seconds")):
        assert float(total[column]) == pytest.approx(runs[f"metrics.system/{metric}"].sum() / 3600, abs=1e-4)


def test_the_card_shows_the_budgets_and_the_gpu_hour_estimate():
    from sentsweep.sweep.compute.gpu_estimate import GpuEstimate
    from sentsweep.sweep.launch.card import sweep_options_section

    lines = sweep_options_section(SweepOptions(time_budget=60.0), GpuEstimate(None, "not estimated", "why"))
    assert "| compute budget | --time-budget | 60 | command line |" in lines
    assert "| compute budget | --gpu-hours | none | project choice (none: no limit) |" in lines
    assert "| compute budget | estimated GPU-hours | not estimated | why |" in lines
