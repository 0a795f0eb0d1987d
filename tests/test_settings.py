"""Typed settings: every field has a default or is an input, a help text and a source; values are checked."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import pytest

from sentsweep.errors import InputError
from sentsweep.references import TSDAE
from sentsweep.settings import Settings, Source, cited, project_choice, required_input, setting
from sentsweep.trainables.catalog import METHODS, get_method, known_setting_names, resolve_trial
from sentsweep.trainables.objectives import OBJECTIVES, UnsupervisedSettings
from sentsweep.trainables.settings import EvaluationSettings, TrainingSettings
from tests.conftest import SHARED_INPUTS


def every_settings_class() -> list[type[Settings]]:
    classes = [TrainingSettings, EvaluationSettings, UnsupervisedSettings]
    classes += [method.settings for _, method in METHODS.items()] + [spec.settings for _, spec in OBJECTIVES.items()]
    return list(dict.fromkeys(classes))


@pytest.mark.parametrize("settings_class", every_settings_class(), ids=lambda cls: cls.__name__)
def test_every_setting_of_every_method_has_a_help_text_and_a_source(settings_class):
    for field in dataclasses.fields(settings_class):
        source = field.metadata["source"]
        assert isinstance(source, Source), f"{settings_class.__name__}.{field.name} has no source"
        assert field.metadata["help"], f"{settings_class.__name__}.{field.name} has no help text"
        if source.reference is not None:
            assert source.where, f"{settings_class.__name__}.{field.name} cites {source.reference.label} nowhere"
        if field.default is dataclasses.MISSING:
            assert source.is_input, f"{settings_class.__name__}.{field.name} has no default, so it is an input"
    assert settings_class.__dataclass_params__.frozen


def test_a_setting_without_a_source_cannot_be_declared():
    with pytest.raises(TypeError, match="needs a source"):
        setting(1, "a number")


@dataclass(frozen=True)
class Example(Settings):
    path: str = setting(help="a required input", source=required_input())
    ratio: float = setting(0.6, "a ratio", cited(TSDAE, "App. A, Table 6"), ge=0, lt=1)
    steps: int = setting(10, "a count", project_choice(), ge=1)
    tied: bool = setting(True, "a switch", project_choice())
    mode: Literal["fp32", "bf16"] = setting("fp32", "a choice", project_choice())
    limit: int | None = setting(None, "an optional count", project_choice(), ge=1)


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "missing setting 'path'"),
        ({"path": 3}, "setting path=3 must be text"),
        ({"path": "x", "ratio": 1.0}, "setting ratio=1.0 is out of range: must be < 1"),
        ({"path": "x", "ratio": -0.1}, "setting ratio=-0.1 is out of range: must be >= 0"),
        ({"path": "x", "ratio": True}, "setting ratio=True must be a number"),
        ({"path": "x", "steps": 2.5}, "setting steps=2.5 must be a whole number"),
        ({"path": "x", "steps": True}, "setting steps=True must be a whole number"),
        ({"path": "x", "steps": 0}, "setting steps=0 is out of range: must be >= 1"),
        ({"path": "x", "tied": 1}, "setting tied=1 must be true or false"),
        ({"path": "x", "mode": "bf61"}, "setting mode='bf61': expected one of 'fp32', 'bf16'; did you mean 'bf16'"),
        ({"path": "x", "limit": 0}, "setting limit=0 is out of range"),
    ],
)
def test_bad_values_are_named(config, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        Example.from_config(config)


def test_good_values_are_typed_and_defaults_fill_the_rest():
    example = Example.from_config({"path": "x", "ratio": 0, "limit": None, "other_group_key": 1})
    assert example == Example(path="x", ratio=0.0, steps=10, tied=True, mode="fp32", limit=None)
    assert isinstance(example.ratio, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        example.steps = 3


def test_describe_gives_each_field_its_allowed_values_and_source():
    rows = {row.name: row for row in Example.describe()}
    assert rows["ratio"].allowed == "float, >= 0 and < 1"
    assert str(rows["ratio"].source) == "TSDAE App. A, Table 6"
    assert rows["mode"].allowed == "fp32 | bf16"
    assert str(rows["path"].source) == "input (no default)" and rows["path"].default is None
    assert str(rows["steps"].source) == "project choice"


def test_a_misspelled_key_is_refused_with_the_closest_key(tsdae_config):
    with pytest.raises(InputError, match="unknown setting 'noise_ration'; did you mean 'noise_ratio'"):
        resolve_trial(tsdae_config | {"noise_ration": 0.5})


def test_keys_of_other_methods_are_known_but_only_the_methods_own_are_read(tsdae_config):
    trial = resolve_trial(tsdae_config | {"method": "simcse", "temperature": 0.1})
    assert trial.objectives["simcse"].temperature == 0.1
    assert set(trial.objectives) == {"simcse"}  # tsdae_config's noise settings are another method's
    assert {"noise_ratio", "temperature", "teacher", "generator"} <= known_setting_names()


def test_an_unsupervised_combination_reads_both_objectives_settings(tsdae_config):
    trial = resolve_trial(tsdae_config | {"method": "tsdae+nm", "w": 0.1, "noise_ratio": 0.3})
    assert trial.objectives["tsdae"].noise_ratio == 0.3
    assert trial.objectives["nm"].nm_noise_ratio == 0.6  # NM's own key, at Reiml 2023 §4.2.3's 60%
    trial = resolve_trial(tsdae_config | {"method": "tsdae+nm", "w": 0.1, "nm_noise_ratio": 0.2})
    assert (trial.objectives["tsdae"].noise_ratio, trial.objectives["nm"].nm_noise_ratio) == (
        tsdae_config["noise_ratio"], 0.2)
    assert trial.settings.w == 0.1 and trial.training.lr == tsdae_config["lr"]
    assert get_method("tsdae+nm").setting_names() >= {"w", "noise_type", "temperature", "lr", "select_checkpoint"}


def test_lexical_methods_take_no_training_settings():
    trial = resolve_trial(SHARED_INPUTS | {"method": "bm25", "lr": "not read"})
    assert trial.training is None and "lr" not in get_method("bm25").setting_names()
