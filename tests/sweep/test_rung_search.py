"""`--sampler rung-gp` on Ray Tune (sentsweep.sweep.search.rung_search), driven by hand: no Ray cluster. Each seed's
score at each evaluation reaches the Optuna study the sampler fits, and a configuration's seeds stop at a rung
exactly where the paired t over its seeds (scipy, by hand here) rejects at the races' alpha over the rungs."""

from types import SimpleNamespace

import numpy as np
import optuna
import pytest
from ray import tune
from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler
from ray.tune.search.optuna import OptunaSearch
from scipy import stats

from sentsweep.analysis.racing import ELIMINATED, RACE_ALPHA, TIED
from sentsweep.errors import InputError
from sentsweep.sweep.config.option_checks import check_search_combination
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.sweep.search.rung_model_sampler import MIN_POINTS, RUNG_SEEDS_ATTRIBUTE, RungModelSampler
from sentsweep.sweep.search.rung_search import RUNG_STOP_ATTRIBUTE, rung_search

METRIC = "best_sts_dev"
TOTAL = 90  # steps; evaluations every 10: the rungs (1/9, 1/3 of the steps) at steps 10 and 30


def make(repeat: int = 3, run_name: str = "rung-test"):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    searcher = OptunaSearch(space={"lr": tune.loguniform(1e-5, 1e-3)}, metric=METRIC, mode="max",
                            sampler=RungModelSampler(seed=0))
    return rung_search(searcher, repeat, run_name)


class Controller:
    """What the scheduler asks of Ray Tune's controller: the trials and their status."""

    trials: list = []

    def get_trials(self):
        return self.trials


CONTROLLER = Controller()


def start(repeater, scheduler, name: str, repeat: int = 3, status=Trial.RUNNING) -> list:
    """A configuration's trials, one per seed, suggested by the repeater and added to the scheduler (running)."""
    trials = []
    for index in range(repeat):
        trial_id = f"{name}{index}"
        config = repeater.suggest(trial_id) | {"seeds": [0, 1, 2], "method": "simcse"}
        trial = SimpleNamespace(trial_id=trial_id, config=config, status=status)
        scheduler.on_trial_add(CONTROLLER, trial)
        trials.append(trial)
    CONTROLLER.trials = [t for t in CONTROLLER.trials if t.trial_id not in {x.trial_id for x in trials}] + trials
    return trials


def evaluate(scheduler, trials, step: int, scores) -> list[str]:
    for trial in trials:
        trial.status = Trial.RUNNING
    return [scheduler.on_trial_result(CONTROLLER, trial, {"step": step, "total_steps": TOTAL, METRIC: score,
                                                          "training_iteration": step // 10 + 1})
            for trial, score in zip(trials, scores)]


def test_each_seeds_score_at_each_evaluation_reaches_the_study_once_every_seed_has_it():
    repeater, scheduler = make()
    trials = start(repeater, scheduler, "a")
    evaluate(scheduler, trials, 0, [50.0, 50.0, 50.0])  # the untrained model: no rung
    evaluate(scheduler, trials[:2], 10, [70.0, 72.0])
    (study_trial,) = repeater.searcher._ot_study.trials
    assert study_trial.intermediate_values == {} and RUNG_SEEDS_ATTRIBUTE not in study_trial.user_attrs
    evaluate(scheduler, trials[2:], 10, [74.0])
    evaluate(scheduler, trials[::-1], 20, [77.0, 76.0, 75.0])  # seeds in any order: kept in seed order
    repeater.on_trial_result("a0", {"step": 20, METRIC: 99.0})  # the searcher told the same step again: kept once
    (study_trial,) = repeater.searcher._ot_study.trials
    assert study_trial.user_attrs[RUNG_SEEDS_ATTRIBUTE] == {"10": [70.0, 72.0, 74.0], "20": [75.0, 76.0, 77.0]}
    assert study_trial.intermediate_values == {10: pytest.approx(72.0), 20: pytest.approx(76.0)}


def test_the_sampler_fits_its_model_to_the_seed_scores_at_the_largest_rung_with_enough_configurations():
    repeater, scheduler = make()
    for index in range(MIN_POINTS):
        trials = start(repeater, scheduler, f"c{index}")
        evaluate(scheduler, trials, 10, [70.0 + index, 70.5 + index, 70.2 + index])
        if index < MIN_POINTS - 1:
            evaluate(scheduler, trials, 20, [71.0 + index, 71.5 + index, 71.2 + index])
    study = repeater.searcher._ot_study
    sampler = study.sampler
    space = sampler.infer_relative_search_space(study, study.trials[0])
    observed, values, se = sampler.observations(study, space)
    assert len(observed) == MIN_POINTS  # step 10: 4 configurations; step 20: 3, too few
    assert values == pytest.approx([70.0 + index + 0.7 / 3 for index in range(MIN_POINTS)])
    assert se == pytest.approx([np.std([70.0, 70.5, 70.2], ddof=1) / np.sqrt(3)] * MIN_POINTS)


def test_a_configuration_stops_at_a_rung_exactly_where_the_paired_t_over_its_seeds_rejects():
    repeater, scheduler = make()
    leader, close, behind = (start(repeater, scheduler, name) for name in "lcb")
    lead = [78.0, 78.6, 78.1]
    assert evaluate(scheduler, leader, 10, lead) == [TrialScheduler.CONTINUE] * 3  # the first: none to compare
    near = [77.0, 79.0, 76.0]  # behind on the mean, within the seeds' noise
    far = [70.0, 71.0, 70.5]
    alpha = RACE_ALPHA / 2  # split over the two rungs
    assert stats.ttest_rel(lead, near, alternative="greater").pvalue >= alpha
    assert stats.ttest_rel(lead, far, alternative="greater").pvalue < alpha
    assert evaluate(scheduler, close, 10, near) == [TrialScheduler.CONTINUE] * 3
    assert evaluate(scheduler, behind, 10, far) == [TrialScheduler.CONTINUE] * 2 + [TrialScheduler.STOP]
    assert evaluate(scheduler, behind[:1], 20, [72.0]) == [TrialScheduler.STOP]  # its other seeds at their next
    step, why = repeater.stops["b0"]
    p = stats.ttest_rel(lead, far, alternative="greater").pvalue
    assert step == 10 and f"one-sided p = {p:.3g} < {alpha:.3g} ({RACE_ALPHA:g} over 2 rungs)" in why
    assert set(repeater.stops) == {"b0"}
    assert repeater.searcher._ot_study.trials[2].user_attrs[RUNG_STOP_ATTRIBUTE] == 10
    for trial in behind:  # stopped: Optuna keeps it as pruned, with its rung's values
        repeater.on_trial_complete(trial.trial_id, {"step": 20, METRIC: 72.0})
    assert repeater.searcher._ot_study.trials[2].state == optuna.trial.TrialState.PRUNED
    outcome = scheduler.outcome()
    states = {status.state for status in outcome["status"].values()}
    assert states == {ELIMINATED, TIED} and len(outcome["status"]) == 3
    assert outcome["stopped"] == {"b0": 10, "b1": 10, "b2": 10}
    assert len(outcome["counted"]) == 9  # every cell: 3 configurations x 3 seeds


def test_a_rung_at_the_last_step_decides_nothing():
    repeater, scheduler = make(repeat=2)
    lead, behind = start(repeater, scheduler, "l", 2), start(repeater, scheduler, "b", 2)
    for trials, scores in ((lead, [80.0, 80.5]), (behind, [60.0, 60.4])):
        assert evaluate(scheduler, trials, TOTAL, scores) == [TrialScheduler.CONTINUE] * 2
    assert repeater.stops == {}


def test_a_rung_decides_on_the_seeds_that_started_and_a_later_seed_stops_at_its_first_report():
    repeater, scheduler = make()
    lead = start(repeater, scheduler, "l")
    evaluate(scheduler, lead, 10, [78.0, 78.6, 78.1])
    behind = start(repeater, scheduler, "b", status=Trial.PENDING)  # its third seed waits for a slot
    assert evaluate(scheduler, behind[:1], 10, [70.0]) == [TrialScheduler.CONTINUE]  # one seed: no test yet
    assert evaluate(scheduler, behind[1:2], 10, [71.0]) == [TrialScheduler.STOP]
    p = stats.ttest_rel([78.0, 78.6], [70.0, 71.0], alternative="greater").pvalue
    assert p < RACE_ALPHA / 2
    assert f"paired t over the 2 seeds both have, one-sided p = {p:.3g}" in repeater.stops["b0"][1]
    assert evaluate(scheduler, behind[2:], 0, [50.0]) == [TrialScheduler.STOP]  # the third seed, at its first report
    study_trial = repeater.searcher._ot_study.trials[1]
    assert study_trial.user_attrs[RUNG_SEEDS_ATTRIBUTE] == {"10": [70.0, 71.0]}  # the seeds it has, told at the stop
    assert study_trial.intermediate_values == {10: pytest.approx(70.5)}


def test_no_rung_stops_a_configuration_one_of_whose_seeds_has_finished():
    repeater, scheduler = make(repeat=2)
    lead, behind = start(repeater, scheduler, "l", 2), start(repeater, scheduler, "b", 2, status=Trial.PENDING)
    evaluate(scheduler, lead, 10, [80.0, 80.5])
    for step in (10, 30, TOTAL):  # seed 0 of the configuration behind runs out before seed 1 starts
        evaluate(scheduler, behind[:1], step, [60.0])
    assert evaluate(scheduler, behind[1:], 10, [60.4]) == [TrialScheduler.CONTINUE]  # the test alone would stop it
    assert stats.ttest_rel([80.0, 80.5], [60.0, 60.4], alternative="greater").pvalue < RACE_ALPHA / 2
    assert repeater.stops == {}
    assert scheduler.outcome()["status"][scheduler.cells["b0"][0]].why == (
        "no stop at step 10: a seed had finished its 90 steps before the seeds started reached that rung")


@pytest.mark.parametrize(("options", "line"), [
    (SweepOptions(search="optuna", sampler="rung-gp", race=True),
     "--sampler rung-gp and --race: rung-gp stops configurations itself"),
    (SweepOptions(search="optuna", sampler="rung-gp", scheduler="median"),
     "--sampler rung-gp and --scheduler median: rung-gp stops configurations itself"),
    (SweepOptions(search="grid", sampler="rung-gp"), "--sampler rung-gp with --search grid: the sampler proposes"),
])
def test_options_rung_gp_cannot_run_with_are_refused(options, line):
    with pytest.raises(InputError) as error:
        check_search_combination(options)
    assert str(error.value).startswith(line)


def feed(repeater, scheduler, configurations: int) -> list[dict]:
    """`configurations` configurations run out on 3 seeds (scores by their lr), one after the other: their
    suggested configs."""
    proposed = []
    for index in range(configurations):
        trials = start(repeater, scheduler, f"k{index}")
        proposed.append({"lr": trials[0].config["lr"]})
        score = 80.0 - 1e3 * abs(trials[0].config["lr"] - 3e-4)
        for step in (10, 30, TOTAL):
            evaluate(scheduler, trials, step, [score - 0.2, score, score + 0.3])
        for trial in trials:
            repeater.on_trial_complete(trial.trial_id, {"step": TOTAL, METRIC: score})
    return proposed


def test_proposals_follow_from_the_seed_and_a_restored_search_proposes_what_the_saved_one_would(tmp_path):
    import pickle

    from ray.tune.search import SearchGenerator

    first = feed(*make(run_name="first"), MIN_POINTS + 2)
    repeater, scheduler = make(run_name="again")
    assert feed(repeater, scheduler, MIN_POINTS + 2) == first  # the same seed: the same configurations
    generator = SearchGenerator(repeater)
    generator.save_to_dir(str(tmp_path), session_str="s")
    next_config = repeater.suggest("next0")["lr"]
    restored, restored_scheduler = make(run_name="again")  # the sweep's own objects, made again by --resume
    assert pickle.loads(pickle.dumps(scheduler)) is restored_scheduler  # what Tuner.restore unpickles
    SearchGenerator(restored).restore_from_dir(str(tmp_path))
    assert restored.rung_scores == repeater.rung_scores and len(restored.searcher._ot_study.trials) == MIN_POINTS + 2
    assert restored.suggest("next0")["lr"] == next_config  # no configuration proposed again, the next one the same
