"""A whole race over seeds as ONE Ray Tune run: a Ray Tune `Searcher` that asks the race for a trial each time
Ray Tune has room for one, and tells it each trial's result as it arrives.

Before, each round of a race was a Ray Tune run of its own: a round waited for its slowest trial while the other
slots idled, and every round paid Ray Tune's start-up again. Here Ray Tune asks `suggest` whenever it may start a
trial (at most `slots` trials live at once: `max_concurrent_trials`, the cluster's room for trials), the race
answers with a (configuration, seed) or with None (nothing may start until results arrive: the round race's
barrier, or the asynchronous race's bounded run-ahead; `sentsweep.analysis.racing`,
`sentsweep.analysis.async_racing`), and `on_trial_complete`
records the trial's selection metric (None for a failed trial). Once the race has finished the searcher says so
(`Searcher.FINISHED`): Ray Tune lets the trials still running end and returns.

Resume. Ray Tune saves a searcher with its experiment state and, on `Tuner.restore`, unpickles the searcher of
the run's `tuner.pkl` and calls `restore` with the saved state. A `RaceSearcher` pickles as a reference to the
searcher this process made for the same run (`race_searcher_named`, as the budget and pending watches do), so
the runner's own searcher is the one restored, and it reads the race's status from it after the run. Ray Tune
saves the searcher and its trials together; it tells the searcher a trial completed before it marks the trial
ended, so a saved trial that ended was recorded by the saved race, and a trial the saved race recorded but Ray
Tune saved as running is run again from its last checkpoint and its second report ignored (`issued` no longer
holds it).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping

from ray.tune.search import Searcher


class RaceSearcher(Searcher):
    """Hand out the trials of `race` (a `Race` or an `AsyncRace`: `next_trial`, `record`, `finished`, `status`)
    to Ray Tune. `points`: {configuration label: the settings its trials set beyond the run's constants};
    `metric`: the selection metric recorded."""

    def __init__(self, run_name: str, race, points: Mapping[str, dict], metric: str) -> None:
        super().__init__(metric=metric, mode="max")
        self.run_name, self.race, self.points = run_name, race, dict(points)
        self.issued: dict[str, tuple] = {}  # Ray Tune's trial id -> (label, seed) of trials not yet recorded
        _SEARCHERS[run_name] = self

    def __reduce__(self):
        return race_searcher_named, (self.run_name,)

    def suggest(self, trial_id: str) -> dict | str | None:
        trial = self.race.next_trial()
        if trial is None:
            return Searcher.FINISHED if self.race.finished else None
        label, seed = trial
        self.issued[trial_id] = trial
        return self.points[label] | {"seed": seed}

    def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
        trial = self.issued.pop(trial_id, None)
        if trial is None:  # recorded before a restore (module docstring)
            return
        value = None if error or not result else result.get(self.metric)
        self.race.record(*trial, value)

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as file:
            pickle.dump({"race": self.race, "issued": self.issued}, file)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as file:
            state = pickle.load(file)
        self.race, self.issued = state["race"], state["issued"]


_SEARCHERS: dict[str, RaceSearcher] = {}


def race_searcher_named(run_name: str) -> RaceSearcher:
    """The searcher this process made for run `run_name` (a restored run's `tuner.pkl` names it)."""
    try:
        return _SEARCHERS[run_name]
    except KeyError:
        raise RuntimeError(f"no race searcher for Ray Tune run {run_name!r} in this process: a raced run is "
                           "restored by the sweep command that made it (--resume)") from None
