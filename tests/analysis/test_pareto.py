"""The Pareto set over several objectives with the seeds' uncertainty (sentsweep.analysis.pareto), `sentsweep
analyze pareto`, and the report's front."""

import numpy as np
import pandas as pd
import pytest

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.pareto import FRONT_MARK, Objective, pareto_front, parse_objective, to_markdown
from sentsweep.errors import InputError
from tests.analysis.test_analysis import log_sweep
from tests.helpers.cluster_helpers import sqlite_store

QUALITY, SIZE = Objective("quality", True), Objective("dim", False)


def runs(configurations: dict, noise: float, seeds: int = 5) -> pd.DataFrame:
    """{method: (quality mean, embedding dimension)}: each seed's quality off by N(0, noise), a seed's shift shared
    by every method (as a seed's data order is)."""
    rng = np.random.default_rng(3)
    shift = rng.normal(0, noise, size=seeds)
    rows = [{"run_id": f"{method}{seed}", "status": "FINISHED", "seed": str(seed), "config_hash": method,
             "params.method": method, "params.dim": str(dim),
             "metrics.quality": quality + shift[seed] + rng.normal(0, noise / 4)}
            for method, (quality, dim) in configurations.items() for seed in range(seeds)]
    return pd.DataFrame(rows)


def test_a_configuration_worse_on_one_objective_and_no_better_on_any_is_off_the_front():
    frame = runs({"big": (80.0, 768), "small": (75.0, 384), "worse": (70.0, 768)}, noise=0.5)
    result = pareto_front(frame, ["method"], [QUALITY, SIZE])
    assert result.front == [("big",), ("small",)]  # small: worse on quality, better (smaller) on dimension
    assert result.members[("worse",)].dominated_by == ("big",)  # the first of the two that dominate it
    big = frame[frame["params.method"] == "big"]["metrics.quality"]
    markdown = to_markdown(result)
    assert (f"| big | {big.mean():.4g} ± {big.std(ddof=1):.2g} | 768 ± 0 | {FRONT_MARK} on the front (n=5) |"
            in markdown)
    assert "| worse | " in markdown and "| dominated by big (n=5) |" in markdown


def test_a_difference_within_the_seeds_spread_drops_nothing():
    result = pareto_front(runs({"big": (80.0, 768), "worse": (79.5, 768)}, noise=6.0, seeds=3), ["method"],
                          [QUALITY, SIZE])
    assert result.front == [("big",), ("worse",)]


def test_the_correction_and_alpha_are_the_tables():
    configurations = {"a": (80.0, 768), "b": (79.0, 768)}
    frame = runs(configurations, noise=1.2, seeds=3)
    loose = pareto_front(frame, ["method"], [QUALITY, SIZE], alpha=0.5, correction="none")
    strict = pareto_front(frame, ["method"], [QUALITY, SIZE], alpha=0.001, correction="holm")
    assert len(loose.front) == 1 and len(strict.front) == 2


@pytest.mark.parametrize("text, message", [
    ("best_sts_dev:up", "--objective 'best_sts_dev:up': the direction must be max or min, got 'up'"),
    ("best_sts_dev", "--objective 'best_sts_dev': expected METRIC:max or METRIC:min"),
])
def test_a_malformed_objective_is_named(text, message):
    with pytest.raises(InputError) as error:
        parse_objective(text)
    assert str(error.value) == message


@pytest.fixture()
def store(tmp_path):
    uri = sqlite_store(tmp_path)
    log_sweep(uri)
    return uri


@pytest.mark.parametrize("objectives, line", [
    (["best_sts_dev:max", "gpu_hours:down"],
     "error: --objective 'gpu_hours:down': the direction must be max or min, got 'down'\n"),
    (["best_sts_dev:max"], "error: a Pareto front needs at least 2 --objective, got 1\n"),
    (["best_sts_dev:max", "params_count:min"],
     "error: --objective 'params_count:min': the runs have no metric or numeric param 'params_count'\n"),
])
def test_bad_objectives_are_one_line_and_exit_2(store, capsys, objectives, line):
    arguments = ["pareto", "--experiment", "nm_weight", "--tracking-uri", store, "--rows", "method", "w"]
    assert analysis_cli.main([*arguments, *(f"--objective={o}" for o in objectives)]) == 2
    assert capsys.readouterr().err == line


def test_the_report_draws_the_front_beside_its_table(store, tmp_path, capsys):
    output = tmp_path / "report" / "report.md"
    assert analysis_cli.main(["report", "--experiment", "nm_weight", "--tracking-uri", store, "--rows", "method",
                              "--columns", "w", "--output", str(output), "--objective", "sts_test_at_best_dev:max",
                              "--objective", "w:max"]) == 0
    text = output.read_text(encoding="utf-8")
    assert "## Pareto front" in text and "![the Pareto front](report_pareto.png)" in text
    assert (output.parent / "report_pareto.png").stat().st_size > 0
    # the report's configurations are its rows x columns (method x w): four, each on the front or dominated
    assert text.count(f"{FRONT_MARK} on the front") + text.count("dominated by") == 4
