"""What a schedule of trials costs on a cluster of `slots` slots: an event simulation of the slot-filling driver.

A sweep's driver (one Ray Tune run whose searcher asks for a trial each time a slot frees) is simulated with
known trial durations: at time 0 and whenever a trial finishes, every free slot gets a paused trial the schedule
names (`resumable()`, `resume(config, seed)`) or else `next_trial()` of the schedule, until it answers None; each
trial's result is recorded (`record(config, seed, value)`) at its finish time. The schedule is anything with
those two methods: a racing.Race (its round barrier appears by itself, since `next_trial` answers None while a
round's results are still to come), an async_racing.AsyncRace, a step_racing.StepRace, or `FixedGrid` (every
trial, no decision). Where the schedule says so, the driver also stops and pauses trials, as the sweep's Ray Tune
run does: after every event, the trials of `unneeded()` stop at once (their slot-time so far counted; in Ray
Tune a stop takes effect at the trial's next evaluation, a little later); a schedule with `rungs` (fractions of
a trial's training) hears of each trial at each of them (`reached(config, seed, fraction, value)`, the value
from `rung_scores`) and the trial goes on, pauses (its progress kept, its slot freed, resumed where it was, at
no cost: a restore from the rung's checkpoint is not modelled) or stops. Nothing here knows about races: the
figures are the driver's.

The figures: wall-clock seconds until the last trial ends (a race that has finished has its trials still
running stopped, as it has those of a configuration it dropped: `unneeded`); busy trial-seconds (the time the
trials held a slot: the compute); the number of trials started (a trial resumed is not started again). Slot
utilisation is busy / (slots x wall). Events at the same time are taken in the order their trials started or
went on; no start-up or scheduling overhead is modelled (add it to the durations).
"""

from __future__ import annotations

import heapq

from sentsweep.analysis.racing import PAUSE, STOP


class FixedGrid:
    """The plain grid as a schedule: hands out `trials` in order, one per call, and decides nothing."""

    def __init__(self, trials):
        self._trials = list(trials)
        self._next = 0

    def next_trial(self) -> tuple | None:
        if self._next == len(self._trials):
            return None
        self._next += 1
        return self._trials[self._next - 1]

    def record(self, config, seed, value) -> None:
        """(A grid decides nothing on a result.)"""


def simulate_schedule(schedule, durations: dict, scores: dict, slots: int,
                      rung_scores: dict | None = None) -> tuple[float, float, int]:
    """(wall_seconds, busy_trial_seconds, trials_started) of running `schedule` on `slots` slots (module
    docstring); `durations` and `scores` map each (config, seed) the schedule may ask for to its seconds of full
    training and its final value (None: a failed trial); `rung_scores` maps each to its values at the
    schedule's `rungs` (a race over steps), in order."""
    if slots < 1:
        raise ValueError(f"slots={slots}: expected at least one slot")
    rungs = tuple(getattr(schedule, "rungs", ()))
    resumable = getattr(schedule, "resumable", list)
    unneeded = getattr(schedule, "unneeded", list)
    events: list = []  # (time, token, trial, the fraction of its training it gets to then)
    running: dict = {}  # trial -> (start of its current stretch, its progress then, token)
    paused: dict = {}  # trial -> its progress
    now = busy = 0.0
    started = tokens = 0

    def run(trial, progress: float) -> None:
        nonlocal tokens
        if trial not in durations or trial not in scores:
            raise ValueError(f"trial {trial!r} has no duration or no score in the simulation's tables")
        target = next((fraction for fraction in rungs if fraction > progress), 1.0)
        running[trial] = (now, progress, tokens)
        heapq.heappush(events, (now + (target - progress) * durations[trial], tokens, trial, target))
        tokens += 1

    def hold_until_now(trial) -> None:
        nonlocal busy
        begin, _, _ = running.pop(trial)
        busy += now - begin

    while True:
        for trial in unneeded():  # stopped as the decision is made
            if trial in running:
                hold_until_now(trial)
            paused.pop(trial, None)
            schedule.record_stopped(*trial)
        while len(running) < slots:
            waiting = resumable()
            if waiting:
                schedule.resume(*waiting[0])
                run(waiting[0], paused.pop(waiting[0]))
            elif (trial := schedule.next_trial()) is not None:
                started += 1
                run(trial, 0.0)
            else:
                break
        if not running:
            if paused:
                raise RuntimeError(f"{len(paused)} trials paused with none running: the schedule resumes none")
            return now, busy, started
        now, token, trial, target = heapq.heappop(events)
        if trial not in running or running[trial][2] != token:
            continue  # stopped before it got there
        hold_until_now(trial)
        if target >= 1.0:
            schedule.record(*trial, scores[trial])
            continue
        decision = schedule.reached(*trial, target, rung_scores[trial][rungs.index(target)])
        if decision == PAUSE:
            paused[trial] = target
        elif decision == STOP:
            schedule.record_stopped(*trial)
        else:
            run(trial, target)
