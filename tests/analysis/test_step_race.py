"""The race over seeds and steps together (sentsweep.analysis.step_racing): a configuration is stopped at an early
rung by its seeds only when the race's test says so, equal configurations are stopped in at most alpha of races,
and the driver's pauses, resumptions and stops (sentsweep.analysis.schedule)."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from sentsweep.analysis.async_racing import AsyncRace
from sentsweep.analysis.race_schedules import make_race
from sentsweep.analysis.racing import BEST, CONTINUE, ELIMINATED, PAUSE, STOP
from sentsweep.analysis.schedule import FixedGrid, simulate_schedule
from sentsweep.analysis.step_racing import RUNGS, StepRace, fraction_text

SEEDS = [0, 1, 2, 3, 4]
# A learning curve: the value at 1/9 and 1/3 of the steps is the final one minus these (every configuration alike).
GAPS = (3.0, 1.0)


def draw(true: dict, rng, sd: float = 1.0, correlation: float = 0.5) -> tuple[dict, dict]:
    """({(config, seed): final value}, {(config, seed): [value at each rung]}): true mean minus the rung's gap plus
    N(0, sd) noise, the noise of one trial correlated `correlation` between its rungs and its end."""
    finals, rungs = {}, {}
    for config, mean in true.items():
        for seed in SEEDS:
            shared = rng.normal(0, sd)
            own = rng.normal(0, sd, size=len(GAPS) + 1)
            noise = math.sqrt(correlation) * shared + math.sqrt(1 - correlation) * own
            finals[(config, seed)] = mean + noise[-1]
            rungs[(config, seed)] = [mean - gap + value for gap, value in zip(GAPS, noise)]
    return finals, rungs


class StepRaceTestingEachAtAlpha(StepRace):
    """The error the check below must catch: every test (each rung, each level) at alpha, as if each were the
    race's only one (successive halving's rungs are separate decisions)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.level_alpha = self.alpha


# --- error control under the null ----------------------------------------------------------------------------


def test_under_the_null_equal_configurations_are_stopped_in_at_most_alpha_of_races_and_the_check_can_fail():
    """The step race's null check: 12 equal configurations, 5 seeds, rungs at 1/9 and 1/3 of the steps, alpha 0.20,
    the noise of a trial correlated between its rungs and its end, 8 slots with random durations (so pauses,
    resumptions and run-ahead in random orders), 600 races. Some configuration is stopped (at a rung or a level) in
    at most alpha + 3 Monte Carlo standard errors of the races; a configuration stopped at a rung is one the race's
    test found worse there (every stop's reason names the test). The same check fails for a race that tests each
    rung and level at alpha instead of splitting it over them: the check can tell the difference."""
    rng = np.random.default_rng(44)
    races, alpha, configs = 600, 0.20, list(range(12))
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / races)
    stopped = {StepRace: 0, StepRaceTestingEachAtAlpha: 0}
    at_a_rung = 0
    for _ in range(races):
        finals, rungs = draw(dict.fromkeys(configs, 0.0), rng)
        durations = {trial: rng.uniform(0.5, 1.5) for trial in finals}
        for kind in stopped:
            race = kind(configs, SEEDS, alpha=alpha)
            simulate_schedule(race, durations, finals, slots=8, rung_scores=rungs)
            assert race.finished and not race.pending()
            stopped[kind] += bool(race.eliminated)
            if kind is StepRace:
                at_a_rung += bool(race.dropped_at_rung())
                for config in race.eliminated:
                    assert "Tukey's range statistic" in race.status()[config].why
    assert stopped[StepRace] / races <= bound
    assert at_a_rung <= stopped[StepRace]
    assert stopped[StepRaceTestingEachAtAlpha] / races > bound


def test_a_configuration_is_stopped_at_a_rung_exactly_when_tukeys_range_there_exceeds_the_split_critical_value():
    rng = np.random.default_rng(45)
    true = {"a": 80.0, "b": 79.8, "c": 79.5, "bad": 76.0}
    finals, rungs = draw(true, rng, sd=0.5)
    race = StepRace(list(true), SEEDS)
    first = [race.next_trial() for _ in range(8)]
    assert first == [(config, seed) for seed in (0, 1) for config in true]
    decisions = [race.reached(*trial, 0.2, rungs[trial][0], step=20) for trial in first]
    assert race.open_rung == 1  # every first-level trial at rung 1/9: decided
    table = np.array([[rungs[(config, seed)][0] for seed in (0, 1)] for config in true])
    residuals = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
    s = math.sqrt((residuals ** 2).sum() / 3)
    means = table.mean(axis=1)
    critical = stats.studentized_range.ppf(1 - 0.20 / 6, 4, 3)  # alpha / (4 levels + 2 rungs)
    for index, config in enumerate(true):
        statistic = (means.max() - means[index]) / (s / math.sqrt(2))
        dropped = statistic > critical and index != means.argmax()
        assert (config in race.eliminated) == dropped, (config, statistic, critical)
    assert race.eliminated == ["bad"]  # 3.5 points at sd 0.5 on 2 seeds: clearly worse; the others not
    status = race.status()["bad"]
    assert status.n == 2 and status.mean == pytest.approx(table[3].mean())
    assert status.why.startswith("significantly worse than ") and " after 2 seeds at 1/9 of the steps (" in status.why
    assert f"q = {critical:.3g} at 0.2 / 6 tests (4 levels, 2 rungs), 4 configs, 3 df" in status.why
    assert decisions[-1] == STOP and decisions[3] == CONTINUE  # ("bad", 0): decided later, by ("bad", 1)'s report
    assert race.unneeded() == [("bad", 0), ("bad", 1)]
    assert race.stopped_at() == {("bad", 0): 20, ("bad", 1): 20}
    assert race.counted_seeds()["bad"] == [0, 1] and race.dropped_at_rung() == {"bad": 1 / 9}


# --- the driver: pauses, resumptions, stops -------------------------------------------------------------------


def wobbly(true: dict) -> dict:
    """Final values: the true mean +-0.5 by seed, the sign alternating between configurations (no two configurations
    within 1 point of each other are told apart on 5 seeds)."""
    return {(config, seed): mean + 0.5 * (-1) ** (index + seed) for index, (config, mean) in enumerate(true.items())
            for seed in SEEDS}


def test_on_two_slots_the_first_level_pauses_at_each_rung_and_a_clearly_worse_configuration_costs_a_fraction():
    """4 configurations x 3 seeds on 2 slots, every trial 9 s: the first level's 8 trials each run 1 s to the rung
    at 1/9 and pause there while others wait to start; the rung drops "bad" (its trials, paused, stop at 1 s each);
    the others resume. "bad" costs 2 trial-seconds, 2/9 of one seed's training; the race without steps trains
    bad's first seeds to their end (18 s)."""
    true = {"a": 80.0, "b": 79.9, "c": 79.8, "bad": 60.0}
    finals = wobbly(true)
    rungs = {trial: [value - 2, value - 1] for trial, value in finals.items()}
    durations = dict.fromkeys(finals, 9.0)
    race = StepRace(list(true), SEEDS[:3])
    log = []

    class Logged:
        """The race, its calls to the driver logged."""
        rungs = race.rungs

        def __getattr__(self, name):
            return getattr(race, name)

        def reached(self, *args):
            decision = race.reached(*args)
            log.append((args[:3], decision))
            return decision

    wall, busy, started = simulate_schedule(Logged(), durations, finals, slots=2, rung_scores=rungs)
    assert race.finished and race.eliminated == ["bad"] and race.status()["a"].state == BEST
    assert [decision for (_, _, done), decision in log if done == RUNGS[0]][:6] == [PAUSE] * 6
    assert race.trials_stopped == 2 and race.stopped_at() == {("bad", 0): None, ("bad", 1): None}
    # 3 configurations x 3 seeds x 9 s, and bad's 2 trials x 1 s
    assert busy == pytest.approx(3 * 3 * 9 + 2 * 1.0) and started == 3 * 3 + 2
    without_steps = AsyncRace(list(true), SEEDS[:3])
    assert simulate_schedule(without_steps, durations, finals, slots=2)[1] >= 3 * 3 * 9 + 2 * 9


def test_with_slots_to_spare_nothing_pauses_and_the_dropped_configuration_stops_where_it_got():
    true = {"a": 80.0, "b": 79.9, "bad": 60.0}
    finals = wobbly(true)
    rungs = {trial: [value - 2, value - 1] for trial, value in finals.items()}
    race = StepRace(list(true), SEEDS)
    first = [race.next_trial() for _ in range(6)]
    ahead = [race.next_trial() for _ in range(3)]
    assert ahead == [("a", 2), ("b", 2), ("bad", 2)]  # nothing waits: the spare slots run seeds ahead
    for trial in first[:-1]:  # bad's second seed is slower; the others go on (nothing waits for their slots)
        assert race.reached(*trial, 0.12, rungs[trial][0], step=12) == CONTINUE
        assert race.reached(*trial, 0.4, rungs[trial][1], step=40) == CONTINUE
    assert race.reached("bad", 1, 0.12, rungs[("bad", 1)][0], step=12) == STOP  # rung 1/9 closes: bad is out
    # its first seed ran on to step 40, its seed 2 from the start; the second told to stop
    assert race.unneeded() == [("bad", 0), ("bad", 1), ("bad", 2)]
    assert race.stopped_at() == {("bad", 0): 12, ("bad", 1): 12}  # what counts is each first seed's rung report
    assert race.status()["bad"].mean == pytest.approx((rungs[("bad", 0)][0] + rungs[("bad", 1)][0]) / 2)


def test_decisions_are_the_same_whatever_the_slots_and_durations():
    rng = np.random.default_rng(46)
    true = {"a": 3.0, "b": 2.8, "c": 2.0, "d": 1.6, "e": 1.0, "f": 0.0, "g": -3.0, "h": 2.9}
    finals, rungs = draw(true, rng, sd=0.5)
    finals[("b", 1)] = None  # a failed trial: missing at the rungs it did not reach, and at the end
    outcomes = set()
    for slots in (1, 3, 8, 40):
        for _ in range(3):
            race = StepRace(list(true), SEEDS)
            durations = {trial: rng.uniform(0.5, 1.5) for trial in finals}
            simulate_schedule(race, durations, finals, slots, rungs)
            outcomes.add((repr(race.status()), repr(race.counted_seeds()), repr(race.dropped_at_rung())))
    assert len(outcomes) == 1
    assert race.dropped_at_rung() and set(race.dropped_at_rung()) < set(race.eliminated)  # rungs and levels


def drive(race, running: list, finals: dict, rungs: dict) -> list:
    """Runs `race` to its end on 2 slots, first in first out: each trial runs to its next rung (or its end) in one
    go; returns what happened, in order."""
    progress = dict.fromkeys(running, 0.0)
    happened = []
    while running:
        trial = running.pop(0)
        if progress[trial] < race.rungs[-1]:
            progress[trial] = min(f for f in race.rungs if f > progress[trial])
            decision = race.reached(*trial, progress[trial], rungs[trial][race.rungs.index(progress[trial])])
            happened.append((trial, progress[trial], decision))
            if decision == CONTINUE:
                running.append(trial)
            elif decision == STOP:
                race.record_stopped(*trial)
        else:
            race.record(*trial, finals[trial])
            happened.append((trial, "ended"))
        for stop in race.unneeded():
            if stop in running:
                running.remove(stop)
            race.record_stopped(*stop)
            happened.append((stop, "stopped"))
        while len(running) < 2 and ((waiting := race.resumable()) or (new := race.next_trial()) is not None):
            trial = waiting[0] if waiting else new
            if waiting:
                race.resume(*trial)
            progress.setdefault(trial, 0.0)
            running.append(trial)
            happened.append((trial, "resumed" if waiting else "started"))
    return happened


def test_a_race_pickled_with_paused_trials_goes_on_as_the_original():
    rng = np.random.default_rng(47)
    finals, rungs = draw({"a": 1.0, "b": 0.0, "c": 0.9, "d": -6.0}, rng, sd=0.5)
    race = StepRace(list("abcd"), SEEDS)
    out = [race.next_trial() for _ in range(4)]
    assert [race.reached(*trial, 0.2, rungs[trial][0]) for trial in out] == [PAUSE] * 4  # seeds 1 wait to start
    assert race.running_count == 0 and race.resumable() == []  # (the rung needs the seeds 1 first)
    copy = pickle.loads(pickle.dumps(race))
    runs = [drive(twin, [twin.next_trial(), twin.next_trial()], finals, rungs) for twin in (race, copy)]
    assert runs[0] == runs[1] and "resumed" in {event[1] for event in runs[0]}
    assert copy.finished and repr(race.status()) == repr(copy.status()) and "d" in race.dropped_at_rung()


def test_settings_are_checked_and_each_schedule_is_made_by_its_name():
    with pytest.raises(ValueError, match="rungs=\\(0.5, 1.0\\)"):
        StepRace(["a", "b"], SEEDS, rungs=(0.5, 1.0))
    with pytest.raises(ValueError, match="rungs are the steps schedule's"):
        make_race("async", ["a", "b"], SEEDS, rungs=(0.5,))
    race = make_race("steps", ["a", "b"], SEEDS, rungs=(0.25,), alpha=0.1)
    assert isinstance(race, StepRace) and race.rungs == (0.25,) and race.level_alpha == pytest.approx(0.1 / 5)
    assert make_race("steps", ["a"], SEEDS).rungs == RUNGS
    assert [fraction_text(f) for f in (1 / 9, 1 / 3, 0.25, 0.123)] == ["1/9", "1/3", "1/4", "0.123"]
    assert simulate_schedule(FixedGrid([("a", 0)]), {("a", 0): 2.0}, {("a", 0): 1.0}, 1) == (2.0, 2.0, 1)
    with pytest.raises(ValueError, match="unknown race schedule 'fast'"):
        make_race("fast", ["a"], SEEDS)
    assert ELIMINATED == "eliminated"
