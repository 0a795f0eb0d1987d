"""The typed sweep options: the command line generated from frozen dataclasses, and stages that read them."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from sentsweep.analysis.tables import ComparisonTable
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.reiml_2023.nm_weight import NmWeightOptions
from sentsweep.sweep.config.options import SweepOptions, build_options_parser, flag_of, parse_options
from sentsweep.sweep.execution.runner import SweepRunner
from sentsweep.sweep.execution.sweep_endings import StageFailed
from sentsweep.sweep.launch.launcher import stage_axes

ROOT = Path(__file__).resolve().parents[2]


def test_every_field_is_an_option_with_its_default_and_help():
    parser = build_options_parser(NmWeightOptions)
    by_dest = {action.dest: action for action in parser._actions}
    for spec in dataclasses.fields(NmWeightOptions):
        action = by_dest[spec.name]
        assert flag_of(spec) in action.option_strings
        assert action.help.replace("%%", "%").startswith(spec.metadata["help"])  # then its default, where shown
    assert by_dest["assignments"].option_strings == ["--set"]
    assert parse_options(NmWeightOptions, []) == NmWeightOptions()  # the parser's defaults are the fields'


def test_parsed_options_are_typed_and_frozen():
    options = parse_options(NmWeightOptions, [
        "--weights", "0.1", "1", "--weight-range", "0.001", "0.5", "--no-table-rows", "--set", "temperature=0.1",
        "tie_decoder=false", "--eval-task", "a=x", "--eval-task", "b=y", "--gpus-per-trial", "auto", "--seeds", "3"])
    assert options.weights == (0.1, 1.0) and options.weight_range == (0.001, 0.5) and options.no_table_rows
    assert options.assignments == ("temperature=0.1", "tie_decoder=false")
    assert options.eval_task == ("a=x", "b=y") and options.gpus_per_trial == "auto"
    assert options.given() == {"weights", "weight_range", "no_table_rows", "assignments", "eval_task",
                               "gpus_per_trial", "seeds"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seeds = "5"
    assert parse_options(SweepOptions, ["--gpus-per-trial", "0.25"]).gpus_per_trial == 0.25
    assert parse_options(SweepOptions, ["--set", "a=1", "--set", "b=2"]).assignments == ("a=1", "b=2")


@pytest.mark.parametrize("argv, message", [
    (["--gpus-per-trial", "half"], "'half' is neither a number of GPUs nor 'auto'"),
    (["--gpus-per-trial", "nan"], "'nan' is neither a number of GPUs nor 'auto'"),
    (["--search", "random"], "invalid choice: 'random'"),
    (["--sts-dir", "a", "--hf-sts", "b"], "not allowed with argument --sts-dir"),
    (["--weight-range", "0.1"], "expected 2 arguments"),
    (["--wieghts", "0.1"], "unrecognized arguments: --wieghts"),
])
def test_a_bad_command_line_is_refused_naming_the_value(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_options(NmWeightOptions, argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_stage_axes_read_the_experiments_options_and_grid_axes_are_lists():
    definition = get_experiment("nm_weight")
    stages = stage_axes(definition, NmWeightOptions(weights=(0.5,), poolings=("mean",), sample_sizes=(64,)))
    assert stages == [("Table 6.10 rows", {"method": definition.protocol.grid("method"), "pooling": ["mean"],
                                           "sample_size": [64]}),
                      ("method x w x pooling", {"method": definition.protocol.grid("weighted_method"), "w": [0.5],
                                                "pooling": ["mean"], "sample_size": [64]})]
    assert [name for name, _ in stage_axes(definition, NmWeightOptions(no_table_rows=True))] == [
        "method x w x pooling"]


@pytest.mark.parametrize("name", experiment_names())
def test_every_experiments_options_parse_to_its_stages(name):
    definition = get_experiment(name)
    assert issubclass(definition.options, SweepOptions)
    options = parse_options(definition.options, [])
    for _, axes in stage_axes(definition, options):
        assert all(not isinstance(values, tuple) for values in axes.values())


class Result:
    def __init__(self, config):
        self.config = config


def runner_of(definition):
    runner = SweepRunner.__new__(SweepRunner)
    runner.definition = definition
    return runner


def greedy_table(best_row: tuple) -> ComparisonTable:
    return ComparisonTable(row_params=[], column_label="metric", rows=[best_row], columns=["best_sts_dev"], cells={},
                           excluded={}, best={"best_sts_dev": best_row})


def test_a_greedy_stage_carries_the_best_values_as_the_trials_configs_hold_them():
    """The table's best row holds numbers and MLflow's text ('True'); the values carried on are the trials' own."""
    runner = runner_of(get_experiment("tsdae_noise"))
    axes = {"tie_decoder": [True, False], "noise_ratio": [0.3, 0.6]}
    results = [Result({"tie_decoder": tie, "noise_ratio": ratio, "seed": 0}) for tie in (True, False)
               for ratio in (0.3, 0.6)]
    best = runner.best_values(greedy_table(("True", 0.6)), axes, {}, results)
    assert best == {"tie_decoder": True, "noise_ratio": 0.6}
    assert type(best["tie_decoder"]) is bool and type(best["noise_ratio"]) is float
    # an --extend whose trials all finished before runs none: the grid's own values
    assert runner.best_values(greedy_table(("False", 0.3)), axes, {}, []) == {"tie_decoder": False, "noise_ratio": 0.3}
    with pytest.raises(StageFailed, match="no trial of the best row"):
        runner.best_values(greedy_table(("False", 0.9)), axes, {}, [])


def test_help_is_generated_from_the_fields():
    completed = subprocess.run([sys.executable, "sweeps/nm_weight.py", "--help"], cwd=ROOT, capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 0
    text = " ".join(completed.stdout.split())
    assert "--weight-range WEIGHT_RANGE WEIGHT_RANGE the range of w Optuna samples (--search optuna)" in text
    assert "--set KEY=VALUE [KEY=VALUE ...] settings of every trial" in text


@pytest.mark.parametrize("argv, carried", [([], {"pooling": "cls"}),
                                           (["--pooling-rule", "best_dev"], {"pooling": "mean"})])
def test_tsdae_noise_hands_on_the_papers_cls_pooling_unless_told_the_best_on_dev(argv, carried):
    """TSDAE App. A: Table 7 scores mean above CLS, and "the CLS pooling is chosen" for the tying step."""
    definition = get_experiment("tsdae_noise")
    runner = runner_of(definition)
    runner.options = parse_options(definition.options, argv)
    stages = {stage.name: stage for stage in definition.stages}
    values, rule = runner.carried_values(stages["pooling"], {"pooling": "mean"})
    assert values == carried
    assert (rule is None) == bool(argv) and (rule is None or "the CLS pooling is chosen" in rule)
    assert runner.carried_values(stages["noise_ratio"], {"noise_ratio": 0.6}) == ({"noise_ratio": 0.6}, None)
