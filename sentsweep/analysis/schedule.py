"""What a schedule of trials costs on a cluster of `slots` slots: an event simulation of the slot-filling driver.

A sweep's driver (one Ray Tune run whose searcher asks for a trial each time a slot frees) is simulated with
known trial durations: at time 0 and whenever a trial finishes, every free slot gets `next_trial()` of the
schedule until it answers None; each trial's result is recorded (`record(config, seed, value)`) at its finish
time. The schedule is anything with those two methods: a racing.Race (its round barrier appears by itself,
since `next_trial` answers None while a round's results are still to come), an async_racing.AsyncRace, or
`FixedGrid` (every trial, no decision). Nothing here knows about races: the figures are the driver's.

The figures: wall-clock seconds until the last trial finishes (trials still running when a race has finished
run to their end, as in Ray Tune, whose searcher saying "finished" stops new trials, not running ones; a race
accepts their late results); busy trial-seconds (the sum of the durations of the trials run: the compute);
the number of trials run. Slot utilisation is busy / (slots x wall). Trials finishing at the same time are
recorded in the order they started; no start-up or scheduling overhead is modelled (add it to the durations).
"""

from __future__ import annotations

import heapq


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


def simulate_schedule(schedule, durations: dict, scores: dict, slots: int) -> tuple[float, float, int]:
    """(wall_seconds, busy_trial_seconds, trials_run) of running `schedule` on `slots` slots (module docstring);
    `durations` and `scores` map each (config, seed) the schedule may ask for to its seconds and its value
    (None: a failed trial)."""
    if slots < 1:
        raise ValueError(f"slots={slots}: expected at least one slot")
    running: list = []  # (finish time, start order, trial)
    now = busy = 0.0
    started = 0
    while True:
        while len(running) < slots and (trial := schedule.next_trial()) is not None:
            if trial not in durations or trial not in scores:
                raise ValueError(f"trial {trial!r} has no duration or no score in the simulation's tables")
            heapq.heappush(running, (now + durations[trial], started, trial))
            started += 1
        if not running:
            return now, busy, started
        now, _, trial = heapq.heappop(running)
        busy += durations[trial]
        schedule.record(*trial, scores[trial])
