"""A race as one Ray Tune run: the searcher between Ray Tune and the race, and the cluster's room for trials."""

import pickle

import pytest
from ray.tune.search import Searcher

from sentsweep.analysis.async_racing import AsyncRace
from sentsweep.analysis.race_schedules import RACE_SCHEDULES, make_race
from sentsweep.analysis.racing import ELIMINATED, Race
from sentsweep.sweep.cluster import Node, trial_slots
from sentsweep.sweep.race_search import RaceSearcher, race_searcher_named


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
