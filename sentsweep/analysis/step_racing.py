"""Racing over seeds and steps together: a configuration clearly worse is dropped at an intermediate evaluation
of its first seeds, at a fraction of one seed's training, under the race's error control.

`StepRace` is `AsyncRace` with rungs (fractions of a trial's steps, default `RUNGS`: 1/9 and 1/3) in its first
level: the driver reports each evaluation (`reached(config, seed, done, value)`, which answers go on, PAUSE or
STOP); when every configuration alive has its first seeds at a rung, Tukey's range test runs on the rung's values.
`alpha` is split over the rungs and the levels, so the whole-race guarantee of `AsyncRace` holds. A trial at an
undecided rung pauses only when another trial needs its slot (`resumable` names the ones to resume).

    race = StepRace(configs, seeds=[0, 1, 2, 3, 4])          # rungs at 1/9 and 1/3 of the steps
    race.reached(config, seed, done=0.12, value=71.3)        # "continue", "pause" or "stop"

Rungs, decisions, the error control, pauses and what a dropped configuration costs: docs/racing.md, "The race
over seeds and steps"."""

from __future__ import annotations

import numpy as np

from sentsweep.analysis.async_racing import AsyncRace
from sentsweep.analysis.racing import CONTINUE, ELIMINATED, PAUSE, RACE_ALPHA, STOP, ConfigStatus

RUNGS = (1 / 9, 1 / 3)  # fractions of a trial's steps; the project's choice (docs/racing.md)


def fraction_text(fraction: float) -> str:
    """A rung's fraction as a reader writes it: 1/9, 1/3, 0.25."""
    for denominator in range(2, 101):
        if abs(fraction * denominator - round(fraction * denominator)) < 1e-9:
            return f"{round(fraction * denominator)}/{denominator}"
    return f"{fraction:g}"


class StepRace(AsyncRace):
    """AsyncRace with the first level's seeds also judged at intermediate evaluations (docs/racing.md): the
    same arguments, and `rungs`, fractions of a trial's steps in (0, 1). Use: whenever a slot is free, resume
    `resumable()[0]` if there is one (`resume`), else start `next_trial()`; give every intermediate evaluation to
    `reached` and do what it says (continue, pause the trial keeping its checkpoint, or stop it); stop the
    trials of `unneeded()` and tell `record_stopped`; give each trial's end to `record`."""

    def __init__(self, configs, seeds: list[int], initial_seeds: int = 2, alpha: float = RACE_ALPHA,
                 rungs=RUNGS, **settings):
        rungs = tuple(sorted(float(fraction) for fraction in rungs))
        if not rungs or len(set(rungs)) != len(rungs) or not all(0 < fraction < 1 for fraction in rungs):
            raise ValueError(f"rungs={rungs}: expected distinct fractions of the steps, each in (0, 1)")
        super().__init__(configs, seeds, initial_seeds=initial_seeds, alpha=alpha, family="race", **settings)
        self.rungs = rungs
        self.tests = self.levels + len(rungs)
        self.level_alpha = alpha / self.tests
        self._first = self.seeds[:initial_seeds]
        self._rung = 0  # the lowest rung not decided (len(rungs): all decided)
        self._at_rung: dict = {config: {} for config in self.configs}  # config -> {seed: [value at rung 0, ...]}
        self._rung_steps: dict = {}  # (config, seed) -> [the step of its report at rung 0, ...] (None: not known)
        self._dropped_at_rung: dict = {}  # config -> the rung that dropped it

    @property
    def open_rung(self) -> int | None:
        """The lowest rung not decided yet (an index into `rungs`); None once all are."""
        return self._rung if self._rung < len(self.rungs) else None

    # --- the driver's side -----------------------------------------------------------------------------------

    def reached(self, config, seed, done: float, value, step: int | None = None) -> str:
        """Trial (config, seed) evaluated at `done` of its steps: its value at every rung it passed (first level
        only), the rungs it completes decided; STOP when the race no longer needs it, PAUSE when it is at a rung
        not decided and another trial needs its slot (docs/racing.md), else CONTINUE."""
        decision = super().reached(config, seed, done, value, step)
        if decision == STOP or seed not in self._first or self._level != self.initial_seeds:
            return decision
        values = self._at_rung[config].setdefault(seed, [])
        steps = self._rung_steps.setdefault((config, seed), [])
        while len(values) < len(self.rungs) and self.rungs[len(values)] <= done:
            values.append(None if value is None else float(value))
            steps.append(step)
        self._decide_rungs()
        if self._finished or self._state[config] == ELIMINATED:
            return STOP
        if len(values) > self._rung and self._slot_wanted():
            self._paused[(config, seed)] = len(values)
            return PAUSE
        return CONTINUE

    def resumable(self) -> list[tuple]:
        """Paused trials whose rung kept their configuration (in issue order); else, when no trial of the open
        level waits to start, the paused trials whose rung is still open (they train on rather than the slot
        idle)."""
        if self._finished:
            return []
        paused = [trial for trial in self._outstanding if trial in self._paused and self._state[trial[0]] != ELIMINATED]
        decided = [trial for trial in paused if self._paused[trial] <= self._rung]
        if decided or self._behind():
            return decided
        return paused

    def next_trial(self) -> tuple | None:
        """As AsyncRace's, after the paused trials that `resumable` names (None while there are any)."""
        if self.resumable():
            return None
        return super().next_trial()

    def stopped_at(self) -> dict:
        """{(config, seed): the step of its report at the rung that dropped its configuration} for the counted
        trials of the configurations a rung dropped (None where the driver gave no step): what a table shows
        for them, however far each trial ran before the driver stopped it."""
        return {(config, seed): self._rung_steps.get((config, seed), [None] * (rung + 1))[rung]
                for config, rung in self._dropped_at_rung.items()
                for seed in self._first if len(self._at_rung[config].get(seed, [])) > rung}

    def dropped_at_rung(self) -> dict:
        """{config: the fraction of the steps at which a rung dropped it}."""
        return {config: self.rungs[rung] for config, rung in self._dropped_at_rung.items()}

    # --- what the read side says of a configuration dropped at a rung ---------------------------------------

    def counted_seeds(self) -> dict:
        """AsyncRace's, but for a configuration a rung dropped: its first seeds with a value at that rung or a
        failure."""
        counted = super().counted_seeds()
        for config, rung in self._dropped_at_rung.items():
            counted[config] = [seed for seed in self._first if len(self._at_rung[config].get(seed, [])) > rung
                               or seed in self._failed[config]]
        return counted

    def status(self) -> dict:
        """AsyncRace's, with a configuration a rung dropped described by its values at that rung."""
        statuses = super().status()
        for config, rung in self._dropped_at_rung.items():
            values = [self._at_rung[config][seed][rung] for seed in self._first
                      if len(self._at_rung[config].get(seed, [])) > rung
                      and self._at_rung[config][seed][rung] is not None]
            failed = sum(seed in self._failed[config] for seed in self._first)
            mean = sum(values) / len(values) if values else float("nan")
            statuses[config] = ConfigStatus(len(values), failed, mean, ELIMINATED, self._why[config],
                                            self._p_value(config))
        return statuses

    # --- the rungs' decisions ----------------------------------------------------------------------------------

    def _before_levels(self, config, seed, value) -> None:
        """A first-level trial's end: its final value at every rung it did not report, then the rungs decided."""
        if seed in self._first and self._level == self.initial_seeds:
            values = self._at_rung[config].setdefault(seed, [])
            steps = self._rung_steps.setdefault((config, seed), [])
            final = None if value is None or value != value else float(value)
            while len(values) < len(self.rungs):
                values.append(final)
                steps.append(None)
        self._decide_rungs()

    def _decide_rungs(self) -> None:
        while not self._finished and self._rung < len(self.rungs) and self._rung_complete(self._rung):
            self._close_rung(self._rung)
            self._rung += 1

    def _rung_complete(self, rung: int) -> bool:
        """Every configuration alive has a value at `rung`, or a failure, on each of the first seeds."""
        return all(len(self._at_rung[config].get(seed, [])) > rung or seed in self._failed[config]
                   for config in self._alive() for seed in self._first)

    def _rung_value(self, config, seed, rung: int) -> float:
        values = self._at_rung[config].get(seed, [])
        return values[rung] if len(values) > rung and values[rung] is not None else float("nan")

    def _close_rung(self, rung: int) -> None:
        where = f" at {fraction_text(self.rungs[rung])} of the steps"
        for config in self._alive():
            if all(self._rung_value(config, seed, rung) != self._rung_value(config, seed, rung)
                   for seed in self._first):
                self._eliminate(config, f"every trial failed ({len(self._first)} seeds)")
        alive = self._alive()
        if len(alive) < 2:
            return
        table = np.array([[self._rung_value(config, seed, rung) for seed in self._first] for config in alive])
        leader = alive[int(np.argmax(self._sign * np.nanmean(table, axis=1)))]
        before = set(self._alive())
        self._test(alive, table, leader, where)
        for config in before - set(self._alive()):
            self._dropped_at_rung[config] = rung
        self._why[leader], self._p[leader] = f"leading after {len(self._first)} seeds{where}", float("nan")
        self._tukey.pop(leader, None)

    def _slot_wanted(self) -> bool:
        """Whether a trial waits for a slot: a first-level trial not started, or a paused one its rung kept."""
        return bool(self._behind()) or any(rungs <= self._rung and self._state[trial[0]] != ELIMINATED
                                          for trial, rungs in self._paused.items())

    def _behind(self) -> list:
        """The configurations alive with a trial of the open level not handed out yet."""
        return [config for config in self._alive() if self._handed[config] < self._level]

    def _may_run_ahead(self) -> bool:
        return not self._paused

    @property
    def _tests_text(self) -> str:
        return f"{self.tests} tests ({self.levels} levels, {len(self.rungs)} rungs)"
