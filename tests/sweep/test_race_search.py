"""A race as one Ray Tune run: the searcher between Ray Tune and the race, and the cluster's room for trials."""

import pickle

import pytest
from ray.tune.search import Searcher

from sentsweep.analysis.async_racing import AsyncRace
from sentsweep.analysis.race_schedules import RACE_SCHEDULES, make_race
from sentsweep.analysis.racing import ELIMINATED, Race
from sentsweep.sweep.compute.cluster import Node, trial_slots
from sentsweep.sweep.search.race_search import RaceSearcher, race_searcher_named


def test_slots_are_the_trials_each_node_fits_summed():
    nodes = [Node("a", cpus=8, gpus=2), Node("b", cpus=3, gpus=0)]
    assert trial_slots(2, 0, nodes) == 4 + 1
    assert trial_slots(1, 0.5, nodes) == 4  # node a: 8 by its CPUs, 4 by its GPUs; node b: no GPU
    assert trial_slots(1, 0.3, [Node("a", cpus=16, gpus=1)]) == 3  # 1 / 0.3 = 3.33
    assert trial_slots(4, 0, [Node("a", cpus=2, gpus=0)]) == 1  # never fewer than one


def round_race() -> Race:
    return Race(["good", "bad"], seeds=[0, 1, 2], initial_seeds=2, alpha=0.2)


def test_the_searcher_hands_out_a_round_one_trial_at_a_time_then_waits_for_its_results():
    race = Race(["good", "close", "bad"], seeds=[0, 1, 2], initial_seeds=2, alpha=0.2)
    points = {"good": {"x": 1}, "close": {"x": 2}, "bad": {"x": 3}}
    searcher = RaceSearcher("run-a", race, points, metric="dev")
    suggested = [searcher.suggest(f"t{i}") for i in range(6)]
    assert suggested == [points[label] | {"seed": seed} for seed in (0, 1) for label in ("good", "close", "bad")]
    assert searcher.suggest("t6") is None  # the round's barrier: every trial out, none back
    for trial_id, value in zip(["t0", "t1", "t2", "t3", "t4"], [80.0, 79.9, 70.0, 81.0, 81.2]):
        searcher.on_trial_complete(trial_id, {"dev": value})
    assert searcher.suggest("t6") is None
    searcher.on_trial_complete("t5", {"dev": 70.5})
    assert [status.state for status in race.status().values()] == ["racing", "racing", ELIMINATED]
    assert [searcher.suggest("t6"), searcher.suggest("t7")] == [{"x": 1, "seed": 2}, {"x": 2, "seed": 2}]
    searcher.on_trial_complete("t6", {"dev": 80.5})
    searcher.on_trial_complete("t7", None, error=True)  # a failed trial is recorded as missing
    assert race.finished and race.status()["close"].failed == 1
    assert searcher.suggest("t8") == Searcher.FINISHED


def test_a_restored_searcher_is_this_processs_own_with_the_saved_race(tmp_path):
    race = round_race()
    searcher = RaceSearcher("run-b", race, {"good": {"x": 1}, "bad": {"x": 2}}, metric="dev")
    searcher.suggest("t0")
    searcher.on_trial_complete("t0", {"dev": 80.0})
    searcher.suggest("t1")
    searcher.save(str(tmp_path / "state.pkl"))

    # the next command (--resume) makes its own searcher of the same run; Ray Tune unpickles the run's tuner.pkl
    fresh = RaceSearcher("run-b", round_race(), {"good": {"x": 1}, "bad": {"x": 2}}, metric="dev")
    restored = pickle.loads(pickle.dumps(searcher))
    assert restored is fresh is race_searcher_named("run-b")
    restored.restore(str(tmp_path / "state.pkl"))
    assert restored.race.pending() == [("bad", 0)] and restored.race.status()["good"].n == 1
    restored.on_trial_complete("t0", {"dev": 99.0})  # recorded before the save: a second report is ignored
    assert restored.race.status()["good"].mean == 80.0
    restored.on_trial_complete("t1", {"dev": 70.0})
    assert restored.race.status()["bad"].n == 1


def test_a_run_no_searcher_of_this_process_made_is_refused():
    with pytest.raises(RuntimeError, match="run-unknown"):
        race_searcher_named("run-unknown")


def test_each_schedule_makes_its_race_with_the_settings_given():
    races = {schedule: make_race(schedule, ["a", "b", "c"], [0, 1, 2], alpha=0.1, initial_seeds=2)
             for schedule in RACE_SCHEDULES}
    assert type(races["rounds"]) is Race
    assert isinstance(races["async"], AsyncRace) and races["async"].family == "race"
    assert isinstance(races["async-per-level"], AsyncRace) and races["async-per-level"].family == "level"
    assert {race.alpha for race in races.values()} == {0.1}
    # the per-level race decides as the round race does, on the same results
    scores = {"a": [80.0, 81.0, 80.5], "b": [79.9, 81.2, 80.0], "c": [70.0, 70.5, 70.2]}
    for race in (races["rounds"], races["async-per-level"]):
        while (trial := race.next_trial()) is not None or not race.finished:
            race.record(*trial, scores[trial[0]][trial[1]])
    assert repr(races["rounds"].status()) == repr(races["async-per-level"].status())


class FakeTrial:
    """What RaceScheduler reads of a Ray Tune trial."""

    def __init__(self, trial_id: str, status: str = "RUNNING"):
        self.trial_id, self.status, self.is_saving = trial_id, status, False


class FakeController:
    """What RaceScheduler calls of Ray Tune's controller: the trials, and stopping one (which tells the searcher, as
    TuneController.stop_trial does for a paused trial)."""

    def __init__(self, searcher):
        self.searcher, self.trials = searcher, {}

    def get_trials(self):
        return list(self.trials.values())

    def stop_trial(self, trial):
        self.searcher.on_trial_complete(trial.trial_id)
        trial.status = "TERMINATED"


def test_the_scheduler_pauses_at_an_open_rung_resumes_when_it_keeps_the_configuration_and_stops_the_dropped():
    from ray.tune.schedulers import TrialScheduler

    from sentsweep.analysis.step_racing import StepRace
    from sentsweep.sweep.search.race_search import RaceScheduler

    configs = {"a": {"x": 1}, "b": {"x": 2}, "bad": {"x": 3}}
    race = StepRace(list(configs), seeds=[0, 1, 2], rungs=(0.25,), alpha=0.2)
    searcher = RaceSearcher("run-steps", race, configs, metric="dev", slots=2)
    scheduler = RaceScheduler("run-steps", slots=2)
    assert pickle.loads(pickle.dumps(scheduler)) is scheduler
    controller = FakeController(searcher)

    def start(trial_id):
        config = searcher.suggest(trial_id)
        if config is not None:
            controller.trials[trial_id] = FakeTrial(trial_id)
        return config

    def report(trial_id, step, dev):
        return scheduler.on_trial_result(controller, controller.trials[trial_id],
                                         {"dev": dev, "step": step, "total_steps": 100})

    assert [start("t0"), start("t1"), start("t2")] == [{"x": 1, "seed": 0}, {"x": 2, "seed": 0}, None]  # 2 slots
    assert report("t0", 30, 80.0) == TrialScheduler.PAUSE  # at the rung (1/4), first-level trials wait to start
    controller.trials["t0"].status = "PAUSED"
    assert start("t2") == {"x": 3, "seed": 0}
    assert report("t1", 30, 79.0) == TrialScheduler.PAUSE
    controller.trials["t1"].status = "PAUSED"
    assert start("t3") == {"x": 1, "seed": 1} and scheduler.choose_trial_to_run(controller) is None
    assert report("t2", 30, 50.0) == TrialScheduler.PAUSE
    controller.trials["t2"].status = "PAUSED"
    assert start("t4") == {"x": 2, "seed": 1}
    assert report("t3", 30, 80.5) == TrialScheduler.PAUSE
    controller.trials["t3"].status = "PAUSED"
    assert start("t5") == {"x": 3, "seed": 1}
    # every first-level trial is out and no rung has kept a paused one: nothing waits for t4's slot, it trains on
    assert report("t4", 30, 79.5) == TrialScheduler.CONTINUE
    # bad's second seed reaches the rung: the rung closes, bad is out (Tukey's range at 0.2 / (2 levels + 1 rung))
    assert report("t5", 30, 51.0) == TrialScheduler.STOP and race.eliminated == ["bad"]
    assert controller.trials["t2"].status == "TERMINATED"  # bad's paused first seed, stopped at once
    searcher.on_trial_complete("t5", {"dev": 51.0, "step": 30, "total_steps": 100})  # Ray Tune ends it
    assert race.trials_stopped == 2 and race.status()["bad"].n == 2
    assert race.stopped_at() == {("bad", 0): 30, ("bad", 1): 30} and searcher.trial_ids[("bad", 1)] == "t5"
    # a slot is free: the paused trials the rung kept resume, first in first out, before anything new
    assert start("t6") is None and scheduler.choose_trial_to_run(controller) is controller.trials["t0"]
    controller.trials["t0"].status = "PENDING"
    assert scheduler.choose_trial_to_run(controller) is controller.trials["t0"]  # (the same, until it runs)
    controller.trials["t0"].status = "RUNNING"
    assert scheduler.choose_trial_to_run(controller) is None  # t4 and t0 on the 2 slots
    assert "2 trials running, 2 paused, 2 stopped for the race" in scheduler.debug_string()
    # a restored run: Ray Tune saved bad's paused first seed as paused (it saves nothing new for a paused trial it
    # stops) and would start it again; the race had stopped it, so it is stopped before it starts
    restored = FakeTrial("t2", "PENDING")
    controller.trials["t2"] = restored
    assert scheduler.choose_trial_to_run(controller) is None and restored.status == "TERMINATED"


def test_the_searcher_counts_running_trials_against_the_slots_and_records_a_failure_as_missing():
    race = AsyncRace(["a", "b", "bad"], seeds=[0, 1, 2], alpha=0.5)
    searcher = RaceSearcher("run-slots", race, {"a": {}, "b": {}, "bad": {}}, metric="dev", slots=2)
    assert searcher.suggest("t0") == {"seed": 0} and searcher.suggest("t1") == {"seed": 0}
    assert searcher.suggest("t2") is None  # two running on two slots
    searcher.on_trial_complete("t0", {"dev": 80.0})
    assert searcher.suggest("t2") == {"seed": 0}
    searcher.on_trial_complete("t1", None, error=True)  # a failure is recorded as missing
    assert race.status()["b"].failed == 1
