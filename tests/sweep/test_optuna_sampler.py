"""`--search optuna` proposes the same configurations under the lock's Optuna, whatever that release's defaults
(sentsweep.sweep.search.optuna_sampler): its sampler is built with every setting stated, and the card says which."""

import pytest
from optuna.samplers import TPESampler
from ray import tune
from ray.tune.search.optuna import OptunaSearch

from sentsweep.sweep.search.optuna_sampler import SAMPLER_SEED, TPE_SETTINGS, make_sampler, sampler_description

SPACE = {"w": tune.uniform(0.0, 1.0), "lr": tune.loguniform(1e-5, 1e-3), "pooling": tune.choice(["cls", "mean", "max"])}
# What a sweep's sampler proposes on SPACE, through Ray Tune's OptunaSearch as the runner uses it, under Optuna
# 5.0.0 (the lock's): 10 random start-up trials, then TPE. Another release that proposes otherwise fails here.
PROPOSED = [(0.548814, 0.000269388, "cls"), (0.645894, 7.50195e-05, "mean"), (0.791725, 0.000114233, "mean"),
            (0.087129, 1.09758e-05, "max"), (0.978618, 0.000396568, "mean"), (0.639921, 1.93511e-05, "cls"),
            (0.264556, 0.000353563, "mean"), (0.617635, 0.000167568, "mean"), (0.359508, 7.4828e-05, "cls"),
            (0.670638, 2.63491e-05, "max"), (0.256792, 0.000951851, "mean"), (0.203877, 0.000805932, "mean"),
            (0.012082, 0.000156386, "mean"), (0.287363, 0.000113444, "mean")]


def proposals(sampler, count: int = len(PROPOSED)) -> list[tuple]:
    """The configurations OptunaSearch with `sampler` proposes on SPACE, each scored (a smooth objective) before the
    next is asked for, rounded as PROPOSED."""
    searcher = OptunaSearch(space=OptunaSearch.convert_search_space(SPACE), metric="dev", mode="max", sampler=sampler)
    proposed = []
    for index in range(count):
        config = searcher.suggest(f"t{index}")
        score = 70 - 10 * (config["w"] - 0.3) ** 2 + {"cls": 0, "mean": 2, "max": 1}[config["pooling"]]
        searcher.on_trial_complete(f"t{index}", {"dev": score})
        proposed.append((round(config["w"], 6), float(f"{config['lr']:.6g}"), config["pooling"]))
    return proposed


def test_the_sampler_proposes_the_pinned_configurations_with_its_settings_stated_not_the_releases_defaults():
    assert proposals(make_sampler()) == PROPOSED
    # Optuna 5.0's own defaults are these settings (so the lock's release proposes the same with either) ...
    assert proposals(TPESampler(seed=SAMPLER_SEED)) == PROPOSED
    # ... and the defaults of Optuna 3.6 and 4.x (independent TPE, no constant liar) propose other configurations
    # once TPE takes over from the start-up trials: the settings matter, and are not left to the release
    older = proposals(TPESampler(seed=SAMPLER_SEED, **(TPE_SETTINGS | {"multivariate": False, "constant_liar": False})))
    assert older[:10] == PROPOSED[:10] and older[10:] != PROPOSED[10:]


@pytest.mark.filterwarnings("error::FutureWarning")
def test_the_sampler_passes_no_deprecated_argument_and_the_card_states_it_with_the_optuna_version():
    make_sampler()  # (TPESampler's deprecated arguments warn: none is passed)
    from importlib.metadata import version

    assert sampler_description() == (f"TPESampler(seed=0, n_startup_trials=10, n_ei_candidates=24, multivariate=True, "
                                     f"group=False, constant_liar=True), Optuna {version('optuna')}")
