"""Config-level early stopping (SeedGroupScheduler) and the searcher's mean ± standard error over seeds
(SeedAveragingRepeater), driven by hand: no Ray cluster, the decisions checked against hand computations."""

from types import SimpleNamespace

import numpy as np
import optuna
import pytest
from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler
from ray.tune.search.optuna import OptunaSearch

from sentsweep.sweep.search.seed_groups import (
    SeedAveragingRepeater,
    SeedGroupScheduler,
    mean_and_standard_error,
    optuna_trial,
    repeater_group,
)


class Controller:
    """What the scheduler asks of Ray Tune's controller: the trials and their status."""

    def __init__(self, trials):
        self.trials = trials

    def get_trials(self):
        return self.trials


def trial(config: str, seed: int, status=Trial.RUNNING):
    return SimpleNamespace(trial_id=f"{config}-{seed}", config={"noise_ratio": config, "seed": seed}, status=status)


def report(scheduler, controller, t, value, step=None, total=100):
    result = {"training_iteration": t, "best_sts_dev": value}
    if step is not None:
        result |= {"step": step, "total_steps": total}
    return lambda item: scheduler.on_trial_result(controller, item, result)


def test_asha_decides_a_configuration_on_the_mean_over_its_seeds_once_both_seeds_reached_the_rung():
    a0, a1, b0, b1 = trial("a", 0), trial("a", 1), trial("b", 0), trial("b", 1)
    controller = Controller([a0, a1, b0, b1])
    scheduler = SeedGroupScheduler("asha", "best_sts_dev", grace_period=2, reduction_factor=2)
    for item, value in ((a0, 70.0), (a1, 80.0)):  # a's mean at rung 2: 75
        assert report(scheduler, controller, 1, value)(item) == TrialScheduler.CONTINUE
    assert report(scheduler, controller, 2, 70.0)(a0) == TrialScheduler.CONTINUE  # a1 not at rung 2 yet
    assert report(scheduler, controller, 2, 80.0)(a1) == TrialScheduler.CONTINUE  # first config at rung 2
    assert [(d.stop, d.seeds_seen) for d in scheduler.decisions] == [(False, 2)]
    # b: seed 0 alone scores 79 (above a's 75) but seed 1 scores 60: mean 69.5 < cutoff (a's 75): both stop
    report(scheduler, controller, 1, 79.0)(b0), report(scheduler, controller, 1, 60.0)(b1)
    assert report(scheduler, controller, 2, 79.0)(b0) == TrialScheduler.CONTINUE  # waits for b1
    assert report(scheduler, controller, 2, 60.0)(b1) == TrialScheduler.STOP
    assert report(scheduler, controller, 3, 79.5)(b0) == TrialScheduler.STOP  # its sibling's decision
    decision = scheduler.decisions[-1]
    assert decision.stop and decision.at == 2 and decision.seeds_seen == 2
    assert "69.5" in decision.why and "75" in decision.why


def test_asha_cutoff_is_ray_tunes_quantile_of_the_means_recorded_before():
    configs = {"a": (70.0, 72.0), "b": (80.0, 82.0), "c": (75.0, 77.0), "d": (73.0, 75.0)}
    trials = {(c, s): trial(c, s) for c in configs for s in (0, 1)}
    controller = Controller(list(trials.values()))
    scheduler = SeedGroupScheduler("asha", "best_sts_dev", grace_period=1, reduction_factor=3)
    stopped = {}
    for config, values in configs.items():
        for seed, value in enumerate(values):
            stopped[config] = report(scheduler, controller, 1, value)(trials[(config, seed)]) == TrialScheduler.STOP
    means = [71.0, 81.0, 76.0, 74.0]
    expected = {"a": False}  # the first has nothing to compare with
    for index, config in enumerate("bcd", start=1):
        expected[config] = means[index] < np.percentile(means[:index], 100 * (1 - 1 / 3))
    assert stopped == expected and stopped["d"] and not stopped["b"]


def test_median_rule_compares_the_mean_best_so_far_with_other_configurations_running_averages():
    trials = {(c, s): trial(c, s) for c in "abcd" for s in (0, 1)}
    controller = Controller(list(trials.values()))
    scheduler = SeedGroupScheduler("median", "best_sts_dev", grace_period=2, min_samples_required=2)
    histories = {"a": [(60, 70), (64, 72)], "b": [(50, 52), (54, 56)], "c": [(62, 66), (60, 70)]}
    actions = {}
    for config, seeds in histories.items():
        for t in (1, 2):
            for seed in (0, 1):
                item = trials[(config, seed)]
                actions[(config, t, seed)] = report(scheduler, controller, t, seeds[seed][t - 1])(item)
    # seeds[seed][t - 1]. a, b: fewer than 2 other configurations with values -> go on. c at t=2: the mean of
    # each seed's best so far, (66 + 70) / 2 = 68, vs the median of a's running average ((60+70)/2 + (64+72)/2) / 2
    # = 66.5 and b's (51 + 55) / 2 = 53: 59.75 -> go on
    assert TrialScheduler.STOP not in actions.values()
    # d at t=2: best so far (56 + 58) / 2 = 57 < the median of a 66.5, b 53, c (64 + 65) / 2 = 64.5 -> stop
    for seed, values in enumerate([(55, 56), (57, 58)]):
        report(scheduler, controller, 1, values[0])(trials[("d", seed)])
    assert report(scheduler, controller, 2, 56)(trials[("d", 0)]) == TrialScheduler.CONTINUE
    assert report(scheduler, controller, 2, 58)(trials[("d", 1)]) == TrialScheduler.STOP
    assert "best so far 57 " in scheduler.decisions[-1].why and "median 64.5 " in scheduler.decisions[-1].why


def configuration_a_at_rung_2():
    """An ASHA scheduler where configuration a (2 seeds) scored 80 at rung 2; b's two seeds run, nothing reported."""
    a0, a1, b0, b1 = trial("a", 0), trial("a", 1), trial("b", 0), trial("b", 1)
    controller = Controller([a0, a1, b0, b1])
    scheduler = SeedGroupScheduler("asha", "best_sts_dev", grace_period=2)
    for item in (a0, a1):
        report(scheduler, controller, 2, 80.0)(item)
    return scheduler, controller, b0, b1


def test_a_configuration_is_not_stopped_once_one_of_its_seeds_finished_or_is_about_to():
    scheduler, controller, b0, b1 = configuration_a_at_rung_2()
    # b0 runs ahead to its end before b1 started; b1 then reaches rung 2 far below a
    for t in (1, 2, 3):
        report(scheduler, controller, t, 60.0, step=10 * t, total=30)(b0)
    scheduler.on_trial_complete(controller, b0, {})
    for t in (1, 2):
        action = report(scheduler, controller, t, 50.0, step=10 * t, total=60)(b1)
    assert action == TrialScheduler.CONTINUE
    assert "goes on: 1 of its seeds finished" in scheduler.decisions[-1].why


def test_a_seed_that_starts_after_its_configuration_stopped_is_stopped_at_its_first_report():
    a0, a1, b0 = trial("a", 0), trial("a", 1), trial("b", 0)
    b1 = trial("b", 1, status=Trial.PENDING)
    controller = Controller([a0, a1, b0, b1])
    scheduler = SeedGroupScheduler("asha", "best_sts_dev", grace_period=1)
    report(scheduler, controller, 1, 80.0)(a0), report(scheduler, controller, 1, 80.0)(a1)
    assert report(scheduler, controller, 1, 50.0)(b0) == TrialScheduler.STOP  # b1 pending: decided on b0
    b1.status = Trial.RUNNING
    assert report(scheduler, controller, 1, 90.0)(b1) == TrialScheduler.STOP


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="'hyperband'"):
        SeedGroupScheduler("hyperband", "best_sts_dev")


def test_the_optuna_study_receives_the_mean_over_seeds_and_its_standard_error():
    from ray import tune

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    searcher = OptunaSearch(space={"w": tune.uniform(0.0, 1.0)}, metric="best_sts_dev", mode="max", seed=0)
    repeater = SeedAveragingRepeater(searcher, repeat=3)
    ids = [f"t{i}" for i in range(3)]
    configs = [repeater.suggest(trial_id) for trial_id in ids]
    assert len({config["w"] for config in configs}) == 1  # one configuration, three seeds
    scores = [70.0, 74.0, float("nan")]  # the third seed failed
    for trial_id, score in zip(ids, scores):
        repeater.on_trial_complete(trial_id, {"best_sts_dev": score})
    (study_trial,) = searcher._ot_study.trials
    assert study_trial.value == pytest.approx(72.0)
    assert study_trial.user_attrs["seed_se"] == pytest.approx(np.std([70.0, 74.0], ddof=1) / np.sqrt(2))
    assert study_trial.user_attrs["seed_n"] == 2
    assert mean_and_standard_error([1.0]) == (1.0, pytest.approx(float("nan"), nan_ok=True), 1)


def test_a_configuration_is_not_stopped_when_a_seed_is_one_report_from_its_end():
    scheduler, controller, b0, b1 = configuration_a_at_rung_2()
    for t in (1, 2):  # b0 at step 20 of 30, reporting every 10 steps: its next report is its last
        report(scheduler, controller, t, 60.0, step=10 * t, total=30)(b0)
    report(scheduler, controller, 1, 50.0, step=10, total=60)(b1)
    assert report(scheduler, controller, 2, 50.0, step=20, total=60)(b1) == TrialScheduler.CONTINUE
    assert "goes on: 1 of its seeds finished or one report from the end" in scheduler.decisions[-1].why


def test_the_ray_internals_the_seed_averaging_repeater_relies_on_still_exist():
    """`SeedAveragingRepeater.on_trial_complete` reaches into Ray Tune's `Repeater` (`_trial_id_to_group`, its
    groups' `report`, `finished_reporting`, `scores`, `primary_trial_id`) and OptunaSearch (`_ot_trials`), through
    `repeater_group` and `optuna_trial`: none is public API, so a Ray release may rename them; this fails on it."""
    from ray import tune

    searcher = OptunaSearch(space={"w": tune.uniform(0.0, 1.0)}, metric="best_sts_dev", mode="max", seed=0)
    repeater = SeedAveragingRepeater(searcher, repeat=2)
    repeater.suggest("a")
    repeater.suggest("b")
    group = repeater_group(repeater, "a")
    assert repeater_group(repeater, "b") is group  # both seeds of one configuration
    assert group.primary_trial_id == "a"
    assert optuna_trial(searcher, "a") is not None, "OptunaSearch._ot_trials no longer maps a trial to Optuna's"
    group.report("a", 70.0)
    assert not group.finished_reporting()
    group.report("b", 74.0)
    assert group.finished_reporting()
    assert sorted(group.scores()) == [70.0, 74.0]
