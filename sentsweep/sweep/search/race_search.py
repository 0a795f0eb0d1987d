"""A whole race over seeds as ONE Ray Tune run: `RaceSearcher` (a Ray Tune `Searcher`) asks the race for a trial
each time Ray Tune has room for one and tells it each result as it arrives; `RaceScheduler` (a `TrialScheduler`)
stops the trials the race no longer needs and pauses and resumes those of a race over steps. Slots are counted
here (a paused trial does not hold one). Both pickle as references to this process's objects for the run
(`race_searcher_named`, `race_scheduler_named`), so `Tuner.restore` resumes the runner's own race.

How a trial flows between Ray Tune and the race, and why resume keeps the race's count: docs/racing.md, "A race as
one Ray Tune run"."""

from __future__ import annotations

import pickle
from collections.abc import Mapping

from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler
from ray.tune.search import Searcher

from sentsweep.analysis.racing import PAUSE, STOP


class RaceSearcher(Searcher):
    """Hand out the trials of `race` (a `Race`, an `AsyncRace` or a `StepRace`: `next_trial`, `record`,
    `record_stopped`, `unneeded`, `finished`, `status`) to Ray Tune. `points`: {configuration label: the settings
    its trials set beyond the run's constants}; `metric`: the selection metric recorded; `slots`: the most trials
    running at once (None: as many as Ray Tune starts)."""

    def __init__(self, run_name: str, race, points: Mapping[str, dict], metric: str, slots: int | None = None) -> None:
        super().__init__(metric=metric, mode="max")
        self.run_name, self.race, self.points, self.slots = run_name, race, dict(points), slots
        self.issued: dict[str, tuple] = {}  # Ray Tune's trial id -> (label, seed) of trials not yet recorded
        self.trial_ids: dict[tuple, str] = {}  # (label, seed) -> Ray Tune's id of its trial, every one handed out
        self.handed_out: dict[str, tuple] = {}  # the same, by Ray Tune's id
        _SEARCHERS[run_name] = self

    def __reduce__(self):
        return race_searcher_named, (self.run_name,)

    def suggest(self, trial_id: str) -> dict | str | None:
        if self.slots is not None and self.race.running_count >= self.slots:
            return None
        trial = self.race.next_trial()
        if trial is None:
            return Searcher.FINISHED if self.race.finished else None
        label, seed = trial
        self.issued[trial_id] = trial
        self.trial_ids[trial], self.handed_out[trial_id] = trial_id, trial
        return self.points[label] | {"seed": seed}

    def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
        trial = self.issued.pop(trial_id, None)
        if trial is None:  # recorded before a restore (docs/racing.md)
            return
        if not error and not ran_to_its_end(result) and trial in self.race.unneeded():
            self.race.record_stopped(*trial)  # stopped at the race's request (RaceScheduler)
            return
        value = None if error or not result else result.get(self.metric)
        self.race.record(*trial, value)

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as file:
            pickle.dump({"race": self.race, "issued": self.issued, "trial_ids": self.trial_ids}, file)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as file:
            state = pickle.load(file)
        self.race, self.issued, self.trial_ids = state["race"], state["issued"], state["trial_ids"]
        self.handed_out = {trial_id: trial for trial, trial_id in self.trial_ids.items()}


def ran_to_its_end(result: dict | None) -> bool:
    """Whether a trial's last result is its end: its step is its total (a result without them: taken as the end)."""
    if not result:
        return False
    step, total = result.get("step"), result.get("total_steps")
    return step is None or total is None or step >= total


class RaceScheduler(FIFOScheduler):
    """Ray Tune's side of a race's stops and pauses (docs/racing.md), for the race of the searcher of run
    `run_name`; `slots` as the searcher's."""

    def __init__(self, run_name: str, slots: int | None = None) -> None:
        super().__init__()
        self.run_name, self.slots = run_name, slots
        _SCHEDULERS[run_name] = self

    def __reduce__(self):
        return race_scheduler_named, (self.run_name,)

    @property
    def searcher(self) -> RaceSearcher:
        return race_searcher_named(self.run_name)

    def on_trial_add(self, tune_controller, trial: Trial) -> None:
        # a restored run: a trial the saved race had paused is started again, from its checkpoint
        self._runs(trial)

    def on_trial_result(self, tune_controller, trial: Trial, result: dict) -> str:
        key = self._runs(trial)
        if key is None:
            return TrialScheduler.CONTINUE
        race = self.searcher.race
        step, total, value = result.get("step"), result.get("total_steps"), result.get(self.searcher.metric)
        if value is not None and step is not None and total and 0 < step < total:
            decision = race.reached(*key, step / total, value, int(step))
        else:
            decision = STOP if key in race.unneeded() else None
        self._stop_paused(tune_controller)
        return {PAUSE: TrialScheduler.PAUSE, STOP: TrialScheduler.STOP}.get(decision, TrialScheduler.CONTINUE)

    def choose_trial_to_run(self, tune_controller) -> Trial | None:
        self._stop_paused(tune_controller)
        trials = tune_controller.get_trials()
        for trial in trials:
            if trial.status == Trial.PENDING:
                return trial
        race = self.searcher.race
        if self.slots is not None and race.running_count >= self.slots:
            return None
        waiting = race.resumable()
        if not waiting:
            return None
        for trial in trials:
            if trial.status == Trial.PAUSED and self.searcher.issued.get(trial.trial_id) == waiting[0]:
                race.resume(*waiting[0])
                return trial
        return None

    def debug_string(self) -> str:
        race = self.searcher.race
        return (f"RaceScheduler: {race.running_count} trials running, {len(race.pending()) - race.running_count} "
                f"paused, {race.trials_stopped} stopped for the race")

    def _runs(self, trial: Trial) -> tuple | None:
        """The trial's (label, seed) where the race handed it out and has not recorded it; the race hears that it
        runs (a trial it had paused, started again by a restored run)."""
        key = self.searcher.issued.get(trial.trial_id)
        if key is not None and trial.status != Trial.PAUSED:
            self.searcher.race.resume(*key)
        return key

    def _stop_paused(self, tune_controller) -> None:
        """Stops the paused (or pausing) trials the race no longer needs, and the trials a restored run would start
        again that the race had stopped (Ray Tune saves no new state for a paused trial it stops, so its saved
        experiment may hold one as paused, and resumes it)."""
        race, searcher = self.searcher.race, self.searcher
        unneeded = set(race.unneeded())
        for trial in tune_controller.get_trials():
            key = searcher.issued.get(trial.trial_id)
            if (trial.status == Trial.PAUSED or trial.is_saving) and key in unneeded:
                tune_controller.stop_trial(trial)
            elif (trial.status in (Trial.PENDING, Trial.PAUSED) and key is None
                  and race.was_stopped(*searcher.handed_out.get(trial.trial_id, (None, None)))):
                tune_controller.stop_trial(trial)


_SEARCHERS: dict[str, RaceSearcher] = {}
_SCHEDULERS: dict[str, RaceScheduler] = {}


def race_searcher_named(run_name: str) -> RaceSearcher:
    """The searcher this process made for run `run_name` (a restored run's `tuner.pkl` names it)."""
    return _made_here(_SEARCHERS, "searcher", run_name)


def race_scheduler_named(run_name: str) -> RaceScheduler:
    """The scheduler this process made for run `run_name` (a restored run's `tuner.pkl` names it)."""
    return _made_here(_SCHEDULERS, "scheduler", run_name)


def _made_here(made: dict, what: str, run_name: str):
    try:
        return made[run_name]
    except KeyError:
        raise RuntimeError(f"no race {what} for Ray Tune run {run_name!r} in this process: a raced run is "
                           "restored by the sweep command that made it (--resume)") from None
