"""The races a sweep can run, by the command line's name (`--race-schedule`): one place that makes each.

- 'async' (the default): `AsyncRace`, a configuration gets its next seed as soon as a slot is free, Tukey's range
  over the levels of seeds: a family-wise error of at most alpha over the whole race when all configurations are
  equal (sentsweep.analysis.async_racing);
- 'steps': `StepRace`, the same race with the first seeds also judged at intermediate evaluations (`rungs`,
  fractions of a trial's steps), alpha split over the rungs and the levels (sentsweep.analysis.step_racing);
- 'async-per-level': `AsyncRace(family="level")`, the round race's decisions, each level tested as a round is,
  at alpha, without its barrier;
- 'rounds': `Race`, the round race (sentsweep.analysis.racing).
"""

from __future__ import annotations

from sentsweep.analysis.async_racing import AsyncRace
from sentsweep.analysis.racing import Race
from sentsweep.analysis.step_racing import RUNGS, StepRace

RACE_SCHEDULES = ("async", "steps", "async-per-level", "rounds")


def make_race(schedule: str, configs: list, seeds: list[int], rungs=None, **settings):
    """The race of `schedule` (`RACE_SCHEDULES`) of `configs` over `seeds`, `settings` as Race takes them;
    `rungs` (the steps schedule's only; None: step_racing.RUNGS)."""
    if schedule not in RACE_SCHEDULES:
        raise ValueError(f"unknown race schedule {schedule!r}: expected one of {', '.join(RACE_SCHEDULES)}")
    if schedule == "steps":
        return StepRace(configs, seeds, rungs=RUNGS if rungs is None else rungs, **settings)
    if rungs is not None:
        raise ValueError(f"rungs are the steps schedule's; the {schedule!r} race has none")
    if schedule == "rounds":
        return Race(configs, seeds, **settings)
    return AsyncRace(configs, seeds, family="race" if schedule == "async" else "level", **settings)
