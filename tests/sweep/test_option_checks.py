"""The command line's options on their own and together: bounds, the search/race/scheduler combinations, settings
given twice or on a swept axis (all checked before anything is read or started)."""

import dataclasses
import math
import re
import typing

import pytest

from sentsweep.errors import InputError
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.tsdae.tsdae_deletion import TsdaeDeletionOptions
from sentsweep.sweep.config.option_checks import (
    check_option_bounds,
    check_search_combination,
    numeric_options,
    search_combinations,
)
from sentsweep.sweep.config.options import SweepOptions, flag_of, parse_assignments
from sentsweep.sweep.config.swept_settings import check_swept_settings, settings_given
from sentsweep.sweep.launch.launcher import stage_axes

BOUND_KEYS = ("gt", "ge", "lt", "le")
OPTION_CLASSES = sorted({get_experiment(name).options for name in experiment_names()} | {SweepOptions},
                        key=lambda cls: cls.__name__)
NUMERIC = [(cls, spec) for cls in OPTION_CLASSES for spec in numeric_options(cls)
           if cls is SweepOptions or spec.name not in {field.name for field in dataclasses.fields(SweepOptions)}]


@pytest.mark.parametrize("cls, spec", NUMERIC, ids=[f"{cls.__name__}.{spec.name}" for cls, spec in NUMERIC])
def test_every_numeric_option_declares_its_bounds_or_the_setting_it_stands_for(cls, spec):
    metadata = spec.metadata
    assert any(metadata.get(key) is not None for key in BOUND_KEYS) or metadata.get("setting"), spec.name


BOUNDED = [(cls, spec) for cls, spec in NUMERIC if any(spec.metadata.get(key) is not None for key in BOUND_KEYS)]


def outside(spec: dataclasses.Field) -> float:
    """A number just past the option's lower bound, or else its upper one."""
    metadata = spec.metadata
    if metadata.get("gt") is not None or metadata.get("ge") is not None:
        return (metadata["gt"] if metadata.get("gt") is not None else metadata["ge"]) - 1
    return (metadata["lt"] if metadata.get("lt") is not None else metadata["le"]) + 1


def whole_numbers(cls, spec: dataclasses.Field) -> bool:
    return "float" not in str(typing.get_type_hints(cls)[spec.name])


def given(spec: dataclasses.Field, number: float, whole: bool):
    """`number` as the option holds it: one of a tuple, a whole number for an int option."""
    value = int(number) if whole else number
    return (value,) if "tuple" in str(spec.type) else value


@pytest.mark.parametrize("cls, spec", BOUNDED, ids=[f"{cls.__name__}.{spec.name}" for cls, spec in BOUNDED])
def test_a_number_outside_an_options_bounds_or_not_finite_is_refused_naming_the_flag(cls, spec):
    whole = whole_numbers(cls, spec)  # (argparse reads no inf or nan as a whole number)
    not_finite = [] if whole else [(math.inf, "must be a finite number"), (math.nan, "must be a finite number")]
    for number, words in [(outside(spec), "must be "), *not_finite]:
        with pytest.raises(InputError, match=f"^{re.escape(flag_of(spec))} .*: {words}"):
            check_option_bounds(cls(**{spec.name: given(spec, number, whole)}))
    check_option_bounds(cls())  # every default within its bounds


@pytest.mark.parametrize("combination", search_combinations(),
                         ids=lambda combination: "-".join(str(value) for value in combination.values()))
def test_every_combination_of_search_race_and_scheduler_runs_or_is_refused_naming_both_options(combination):
    """The combinations the options' own choices allow: a race takes a grid and no scheduler, and the race's
    schedule needs --race; every other combination passes."""
    defaults = SweepOptions.defaults()
    options = SweepOptions(**combination)
    runs = (combination["race"] and combination["search"] == "grid"
            and combination["scheduler"] == defaults["scheduler"]) or (
        not combination["race"] and combination["race_schedule"] == defaults["race_schedule"])
    if runs:
        check_search_combination(options)
        return
    with pytest.raises(InputError) as refused:
        check_search_combination(options)
    text = str(refused.value)
    others = [f"{flag} {value}" for flag, value in (("--search", combination["search"]),
                                                    ("--scheduler", combination["scheduler"]),
                                                    ("--race-schedule", combination["race_schedule"]))
              if text.startswith(f"{flag} {value} ")]
    assert len(others) == 1 and re.search(r"--race\b(?!-)", text), text


def test_optuna_and_a_race_are_refused_saying_why_and_what_to_give_instead():
    with pytest.raises(InputError) as refused:
        check_search_combination(SweepOptions(search="optuna", race=True))
    assert str(refused.value) == (
        "--search optuna and --race: a race compares a fixed set of configurations over the seeds, while optuna "
        "chooses each next configuration from the results so far; race a grid (--search grid --race), or give "
        "--search optuna with --scheduler asha or median, which judge its configurations on their seeds' mean")


def test_a_setting_given_twice_is_refused_naming_both():
    with pytest.raises(InputError, match=re.escape("--set lr=1e-3 lr=2e-3: lr is given twice; give it once")):
        parse_assignments(["lr=1e-3", "lr=2e-3"])
    with pytest.raises(InputError, match=re.escape("--lr 0.001 and --set lr=2e-3 both set lr; give one")):
        settings_given(SweepOptions(lr=1e-3, assignments=("lr=2e-3",)))
    assert settings_given(SweepOptions(lr=1e-3, assignments=("tie_decoder=true",))) == {
        "tie_decoder": ("--set tie_decoder=true", True), "lr": ("--lr 0.001", 1e-3)}


def swept(options: TsdaeDeletionOptions) -> None:
    check_swept_settings(options, stage_axes(get_experiment("tsdae_deletion"), options))


@pytest.mark.parametrize("options, message", [
    (TsdaeDeletionOptions(quick=True, assignments=("noise_ratio=1.5",)),
     "setting noise_ratio=1.5 is out of range: must be < 1"),
    (TsdaeDeletionOptions(quick=True, assignments=("pooling=foo",)), "setting pooling='foo': expected one of"),
    (TsdaeDeletionOptions(quick=True, assignments=("noise_ratio=0.5",)),
     "--set noise_ratio=0.5: noise_ratio is an axis of this sweep (stage 'deletion_ratio x pooling': 0.3, 0.6), "
     "whose trials run the axis' values, not one value for all; give its values with --ratios"),
    (TsdaeDeletionOptions(quick=True, assignments=("pooling=mean",)), "give its values with --poolings"),
    (TsdaeDeletionOptions(search="optuna", assignments=("noise_ratio=0.5",)),
     "(stage 'optuna': sampled from 0.1 to 0.9), whose trials run the axis' values, not one value for all; give "
     "its values with --ratio-range"),
    (TsdaeDeletionOptions(batch_sizes=(8, 16), assignments=("batch_size=32",)), "give its values with --batch-sizes"),
])
def test_a_setting_on_a_swept_axis_is_refused_naming_the_axis_option(options, message):
    with pytest.raises(InputError, match=re.escape(message)):
        swept(options)


def test_a_setting_no_stage_sweeps_passes():
    swept(TsdaeDeletionOptions(quick=True, assignments=("tie_decoder=true", "noise_type=swap"), lr=1e-3))
