"""The noise-aware GP sampler of `--search optuna --sampler noise-gp` (sentsweep.sweep.search.noise_aware_sampler):
reproducible, led by each configuration's standard error, refused on a space without a continuous parameter."""

import math

import numpy as np
import optuna
import pytest
from ray import tune

from sentsweep.errors import InputError
from sentsweep.sweep.search.noise_aware_sampler import (
    NOISE_FLOOR,
    SE_ATTRIBUTE,
    AveragedGP,
    NoiseAwareGPSampler,
    check_space,
    model_best,
    observation_noise,
)
from sentsweep.sweep.search.optuna_sampler import make_sampler, sampler_description

SPACE = {"lr": optuna.distributions.FloatDistribution(1e-5, 1e-3, log=True),
         "pooling": optuna.distributions.CategoricalDistribution(["cls", "mean"])}


def score(params: dict) -> float:
    """A smooth optimum at lr = 1e-4 with mean pooling."""
    return 80 - 20 * (math.log10(params["lr"]) + 4) ** 2 - 5 * (params["pooling"] == "cls")


def run_study(sampler, trials: int, se_of=lambda params: 0.5) -> list[dict]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    rng = np.random.default_rng(0)
    for _ in range(trials):
        trial = study.ask(SPACE)
        se = se_of(trial.params)
        trial.set_user_attr(SE_ATTRIBUTE, se)
        study.tell(trial, score(trial.params) + rng.normal(0, se))
    return [trial.params for trial in study.trials]


def test_proposals_are_reproducible_from_the_seed():
    first = run_study(NoiseAwareGPSampler(seed=0), 6)  # 4 random, then 2 from the model
    assert run_study(NoiseAwareGPSampler(seed=0), 6) == first
    assert run_study(NoiseAwareGPSampler(seed=1), 6) != first


def test_the_standard_errors_change_what_it_proposes():
    quiet = run_study(NoiseAwareGPSampler(seed=0), 8, se_of=lambda params: 0.01)
    noisy_cls = run_study(NoiseAwareGPSampler(seed=0), 8, se_of=lambda params: 0.01 if params["pooling"] == "mean"
                          else 20.0)
    assert quiet[:4] == noisy_cls[:4]  # the random start
    assert quiet[4:] != noisy_cls[4:]


def test_it_finds_the_optimum_of_a_noisy_mixed_space():
    proposals = run_study(NoiseAwareGPSampler(seed=0), 16)
    best = max(proposals[4:], key=score)
    assert best["pooling"] == "mean" and abs(math.log10(best["lr"]) + 4) < 0.3


def test_a_space_without_a_continuous_parameter_is_refused_in_one_line():
    check_space({"lr": tune.loguniform(1e-5, 1e-3), "pooling": tune.choice(["cls", "mean"])})
    for space in ({"pooling": tune.choice(["cls", "mean"]), "w": tune.choice([0.1, 1.0])},
                  {"pooling": tune.choice(["cls", "mean"]), "w": tune.uniform(0.1, 0.1)}):
        with pytest.raises(InputError) as error:
            check_space(space)
        assert str(error.value) == ("--sampler noise-gp needs a continuous parameter (a float range of more than "
                                    "one value) among the sampled pooling, w: use --search grid or the tpe sampler")


def test_the_card_states_what_it_assumes():
    assert isinstance(make_sampler("noise-gp"), NoiseAwareGPSampler)
    assert sampler_description("noise-gp").startswith(
        "NoiseAwareGPSampler(seed=0): each configuration's seed mean observed with its standard error as noise")


def test_the_sampler_without_an_optuna_search_is_refused_in_one_line():
    from sentsweep.sweep.config.option_checks import check_search_combination
    from sentsweep.sweep.config.options import SweepOptions

    check_search_combination(SweepOptions(search="optuna", sampler="noise-gp"))
    with pytest.raises(InputError) as error:
        check_search_combination(SweepOptions(search="grid", sampler="noise-gp"))
    assert str(error.value) == ("--sampler noise-gp with --search grid: the sampler proposes configurations of "
                                "--search optuna; add --search optuna, or leave --sampler out")


def test_a_restored_sampler_proposes_what_the_uninterrupted_one_does():
    """Ray Tune's OptunaSearch keeps the study and its sampler in the experiment's state (pickled): a --resume
    continues from the sampler's saved state."""
    import pickle

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    uninterrupted = run_study(NoiseAwareGPSampler(seed=0), 6)
    study = optuna.create_study(direction="maximize", sampler=NoiseAwareGPSampler(seed=0))
    for index in range(6):
        if index == 3:  # interrupted after 3 trials, the study restored with its sampler
            study = pickle.loads(pickle.dumps(study))
        trial = study.ask(SPACE)
        trial.set_user_attr(SE_ATTRIBUTE, 0.5)
        study.tell(trial, score(trial.params) + np.random.default_rng(0).normal(0, 0.5, size=index + 1)[-1])
    assert [trial.params for trial in study.trials] == uninterrupted


def test_a_configuration_whose_few_seeds_agree_by_chance_is_not_taken_as_exact():
    se = np.array([0.01, 1.0, 1.0, 1.0, float("nan")])
    noise = observation_noise(se, spread=1.0)
    pooled = (0.01 ** 2 + 3 * 1.0) / 4
    assert noise[0] == pytest.approx((0.01 ** 2 + 4 * pooled) / 5)  # its own se^2 and the 4 known, weighted alike
    assert noise[0] > 0.5 and noise[1] == pytest.approx((1.0 + 4 * pooled) / 5)
    assert noise[4] == pytest.approx(pooled)  # a single seed: the pooled se^2
    assert np.all(observation_noise(np.full(3, float("nan")), 1.0) == NOISE_FLOOR)


def completed_study(points: list[tuple[float, float, float]]) -> list:
    """Completed trials over x in [0, 1], each (x, value, standard error)."""
    return [optuna.trial.create_trial(params={"x": float(x)}, value=value, user_attrs={SE_ATTRIBUTE: se},
                                      distributions={"x": optuna.distributions.FloatDistribution(0.0, 1.0)})
            for x, value, se in points]


def test_the_models_best_is_where_the_neighbours_agree_not_a_lone_lucky_mean():
    smooth = [(x, 1.0 - (x - 0.7) ** 2, 0.3) for x in np.linspace(0.0, 1.0, 11)]
    lucky = (0.05, 1.4, 0.3)  # highest mean, but its neighbours say the score there is about 0.5
    trials = completed_study(smooth + [lucky])
    assert max(trials, key=lambda trial: trial.value).params["x"] == 0.05
    assert 0.5 <= model_best(trials).params["x"] <= 0.9  # within 0.04 of the smooth optimum's score
    assert model_best(trials[:1]) is trials[0] and model_best([]) is None


def test_the_models_best_around_a_narrow_peak_is_nearer_its_top_than_the_best_mean():
    """Means about as noisy as the configurations differ, around a peak narrower than their range: averaged over 20
    draws of the noise, the model's best is nearer the top than the best mean is."""
    model_distance, mean_distance = [], []
    for draw in range(20):
        noise = np.random.default_rng(draw).normal(0.0, 0.5, 13)
        trials = completed_study([(x, 1.0 - min(1.0, ((x - 0.6) / 0.15) ** 2) + e, 0.5)
                                  for x, e in zip(np.linspace(0.0, 1.0, 13), noise)])
        model_distance.append(abs(model_best(trials).params["x"] - 0.6))
        mean_distance.append(abs(max(trials, key=lambda trial: trial.value).params["x"] - 0.6))
    assert np.mean(model_distance) < 0.07 < np.mean(mean_distance)


def test_the_length_scales_weighted_by_the_data_follow_how_fast_the_score_varies():
    x = np.linspace(0.0, 1.0, 12)[:, None]
    noise = np.full(12, 0.01)
    wiggly = AveragedGP(x, np.sin(12 * x[:, 0]) / 0.7, noise, [0])
    smooth = AveragedGP(x, (x[:, 0] - 0.5) / 0.3, noise, [0])
    def log_length(model: AveragedGP) -> float:  # the length scale's log, averaged by the draws' weights
        return float(model.weights @ np.log(model.lengths[:, 0]))

    assert log_length(wiggly) < math.log(0.3) < log_length(smooth)
    assert wiggly.weights.sum() == pytest.approx(1.0) and np.all(wiggly.weights > 0)
