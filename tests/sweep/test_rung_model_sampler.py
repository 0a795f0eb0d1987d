"""Model-based multi-fidelity over steps and seeds (sentsweep.sweep.search.rung_model_sampler): the model fitted at
the largest rung with enough configurations, proposals reproducible from the seed, and a configuration stopped at a
rung only on its seeds' test."""

import optuna
import pytest

from sentsweep.analysis.racing import RACE_ALPHA
from sentsweep.sweep.search.rung_model_sampler import (
    MIN_POINTS,
    RUNG_SEEDS_ATTRIBUTE,
    RungModelSampler,
    SeedTestPruner,
    model_rung,
    rung_observations,
    significantly_worse,
)

SPACE = {"ratio": optuna.distributions.FloatDistribution(0.1, 0.9),
         "pooling": optuna.distributions.CategoricalDistribution(["cls", "mean"])}


def score(params: dict) -> float:
    return 78.0 - 10 * (params["ratio"] - 0.6) ** 2 + 0.5 * (params["pooling"] == "mean")


def report(trial, rung: int, seeds: list[float]) -> None:
    by_rung = dict(trial.user_attrs.get(RUNG_SEEDS_ATTRIBUTE, {}))
    by_rung[str(rung)] = seeds
    trial.set_user_attr(RUNG_SEEDS_ATTRIBUTE, by_rung)
    trial.report(sum(seeds) / len(seeds), rung)


def run_study(sampler, configurations: int, pruner=None) -> optuna.Study:
    """Each configuration on 3 seeds (offsets -0.3, 0, 0.3), reported at rungs 1 and 3, stopped where the pruner
    says, else told its mean at rung 9."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner or optuna.pruners.NopPruner())
    for _ in range(configurations):
        trial = study.ask(SPACE)
        stopped = False
        for rung in (1, 3, 9):
            report(trial, rung, [score(trial.params) - (9 - rung) / 3 + offset for offset in (-0.3, 0.0, 0.3)])
            if rung < 9 and trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                stopped = True
                break
        if not stopped:
            study.tell(trial, score(trial.params))
    return study


def test_the_model_is_fitted_at_the_largest_rung_with_enough_configurations():
    study = run_study(optuna.samplers.RandomSampler(seed=0), MIN_POINTS + 1, SeedTestPruner([1, 3], alpha=0.999))
    by_rung = rung_observations(study.trials, SPACE)
    stopped = sum(trial.state == optuna.trial.TrialState.PRUNED for trial in study.trials)
    assert stopped >= 1  # at alpha 0.999 every configuration behind the leader stops
    assert len(by_rung[1]) == MIN_POINTS + 1 and len(by_rung[9]) == MIN_POINTS + 1 - stopped
    assert model_rung(by_rung) == (9 if len(by_rung[9]) >= MIN_POINTS else 3 if len(by_rung[3]) >= MIN_POINTS else 1)
    trial, mean, se = by_rung[1][0]
    assert mean == pytest.approx(score(trial.params) - 8 / 3) and se == pytest.approx(0.3 / 3 ** 0.5)
    assert model_rung({1: by_rung[1][:MIN_POINTS - 1]}) is None


def test_proposals_are_reproducible_from_the_seed_and_follow_the_model_after_the_start():
    first = [trial.params for trial in run_study(RungModelSampler(seed=0), 7).trials]
    assert [trial.params for trial in run_study(RungModelSampler(seed=0), 7).trials] == first
    assert [trial.params for trial in run_study(RungModelSampler(seed=1), 7).trials] != first
    random = [trial.params for trial in run_study(optuna.samplers.RandomSampler(seed=0), 7).trials]
    assert first[:MIN_POINTS] == random[:MIN_POINTS] and first[MIN_POINTS:] != random[MIN_POINTS:]


def test_the_seeds_test_decides_a_stop():
    assert significantly_worse([70.0, 71.0, 70.5], [78.0, 78.6, 78.1], alpha=0.1)
    assert not significantly_worse([77.0, 79.0, 76.0], [78.0, 78.6, 78.1], alpha=0.1)  # behind, within the noise
    assert not significantly_worse([70.0], [78.0], alpha=0.1)  # one pair: no test
    assert significantly_worse([70.0, 71.0], [71.0, 72.0], alpha=0.1)  # the same difference on every seed


def test_a_configuration_is_stopped_only_at_its_rungs_and_only_when_significantly_behind_the_leader():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = SeedTestPruner([1, 3])
    assert pruner.alpha == RACE_ALPHA
    study = optuna.create_study(direction="maximize", pruner=pruner)
    leader, noisy, worse = (study.ask(SPACE) for _ in range(3))
    report(leader, 1, [78.0, 78.6, 78.1])
    report(noisy, 1, [77.0, 79.0, 76.0])
    report(worse, 2, [70.0, 71.0, 70.5])
    assert not noisy.should_prune()
    assert not worse.should_prune()  # step 2 is no rung
    report(worse, 3, [70.0, 71.2, 70.5])
    report(leader, 3, [78.0, 78.6, 78.1])
    assert worse.should_prune()
    assert not leader.should_prune()
