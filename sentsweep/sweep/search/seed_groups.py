"""A configuration judged by the mean over its seeds, by the early-stopping scheduler and by the searcher: its
seeds stop or go on together (`SeedGroupScheduler`, `--scheduler asha|median`), and the searcher learns from their
mean with its standard error (`SeedAveragingRepeater`, `--search optuna`).

`SeedGroupScheduler(rule, metric, mode, grace_period, reduction_factor)` groups a configuration's trials by
`config_hash` (the config without its seed) and decides for the group on the mean over its seeds, at decision
points of `time_attr`; its `decisions` say what it decided and why. `SeedAveragingRepeater(searcher, repeat)` tells
the searcher a configuration's seed mean under the metric's name, with `<metric>_se` and `<metric>_n`. The rules
(ASHA, the median stopping rule), when a decision is taken and what the searcher is told: docs/sweeps.md, "Early
stopping and search over seeds".

    scheduler = SeedGroupScheduler("asha", metric="best_sts_dev", mode="max", grace_period=2, reduction_factor=2)
    searcher = SeedAveragingRepeater(OptunaSearch(...), repeat=5)
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler
from ray.tune.search import Repeater

from sentsweep.tracking.callback import config_hash

RULES = ("asha", "median")
# The project's choices (no seed sets them): ASHA's first rung after 2 reports and a rung at each doubling; the
# median rule needs 2 other configurations' averages.
PROJECT_RUNG_SETTINGS = {"grace_period": 2, "reduction_factor": 2, "min_samples_required": 2}


@dataclass(frozen=True)
class GroupDecision:
    config_hash: str
    at: int  # the value of time_attr the decision was taken at
    stop: bool
    seeds_seen: int  # the seeds whose values the decision used
    why: str


class SeedGroupScheduler(FIFOScheduler):
    """ASHA or median stopping of configurations, each judged on the mean over its seeds (docs/sweeps.md, "Early
    stopping and search over seeds")."""

    def __init__(self, rule: str, metric: str, mode: str = "max", grace_period: int = 2, reduction_factor: int = 2,
                 max_t: int = 100, min_samples_required: int = 2, time_attr: str = "training_iteration"):
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}: expected one of {', '.join(RULES)}")
        if mode not in ("max", "min"):
            raise ValueError(f"mode={mode!r}: expected 'max' or 'min'")
        super().__init__()
        self.rule, self.time_attr = rule, time_attr
        self._metric, self._mode = metric, mode  # Ray Tune's TrialScheduler reads them (`metric`, `mode`)
        self._sign = 1.0 if mode == "max" else -1.0
        self.grace_period, self.reduction_factor, self.min_samples_required = grace_period, reduction_factor, \
            min_samples_required
        self.rungs = [grace_period * reduction_factor ** k for k in range(64)
                      if grace_period * reduction_factor ** k <= max_t]
        self._keys: dict = {}  # trial id -> config hash
        self._history: dict = defaultdict(dict)  # config hash -> {trial id: [(t, signed value)]}
        self._finished: dict = defaultdict(set)  # config hash -> trial ids that trained to their end
        self._last_step: dict = {}  # trial id -> the training step of its last report
        self._last_report_is_next: dict = {}  # trial id -> whether its next report is its last (step, total_steps)
        self._decided: dict = defaultdict(set)  # config hash -> decision points already decided
        self._rung_means: dict = defaultdict(list)  # rung -> the signed means configurations had there (asha)
        self._stopped: set = set()  # config hashes stopped
        self.decisions: list[GroupDecision] = []

    # --- Ray Tune's scheduler interface ---------------------------------------------------------------------

    def on_trial_result(self, tune_controller, trial: Trial, result: dict) -> str:
        key = self._key(trial)
        if key in self._stopped:
            return TrialScheduler.STOP
        if self._metric not in result or self.time_attr not in result:
            return TrialScheduler.CONTINUE
        t = int(result[self.time_attr])
        self._history[key].setdefault(trial.trial_id, []).append((t, self._sign * float(result[self._metric])))
        self._note_progress(trial.trial_id, result)
        started = self._started(tune_controller, key)
        for point in self._decision_points(key, t):
            if not all(self._reported_up_to(key, trial_id) >= point for trial_id in started):
                break  # a seed of this configuration has not got there yet: decide when it has
            self._decided[key].add(point)
            if self._decide(key, point):
                return TrialScheduler.STOP
        return TrialScheduler.CONTINUE

    def on_trial_complete(self, tune_controller, trial: Trial, result: dict) -> None:
        key = self._key(trial)
        if key not in self._stopped:
            self._finished[key].add(trial.trial_id)

    def debug_string(self) -> str:
        return (f"SeedGroupScheduler({self.rule}): {len(self._stopped)} of {len(self._history)} configurations "
                "stopped, every seed of each together")

    # --- decisions -------------------------------------------------------------------------------------------

    def _started(self, tune_controller, key: str) -> set:
        """The trial ids of the configuration that reported or are running (not those ended by an error)."""
        trials = [trial for trial in tune_controller.get_trials() if self._key(trial) == key]
        running = {trial.trial_id for trial in trials if trial.status == Trial.RUNNING}
        errored = {trial.trial_id for trial in trials if trial.status == Trial.ERROR}
        return (running | set(self._history[key]) | self._finished[key]) - errored

    def _key(self, trial) -> str:
        """The trial's configuration hash (its config without the seed), computed once per trial."""
        if trial.trial_id not in self._keys:
            self._keys[trial.trial_id] = config_hash(trial.config)
        return self._keys[trial.trial_id]

    def _reported_up_to(self, key: str, trial_id: str) -> float:
        """The last time the trial reported; infinite for one that finished (it will not report again)."""
        if trial_id in self._finished[key]:
            return float("inf")
        history = self._history[key].get(trial_id)
        return history[-1][0] if history else -1

    def _decision_points(self, key: str, t: int) -> list[int]:
        """The decision points up to t not decided yet for the configuration, in order."""
        if self.rule == "asha":
            points = [rung for rung in self.rungs if rung <= t]
        else:
            points = sorted({time for history in self._history[key].values() for time, _ in history
                             if self.grace_period <= time <= t})
        return [point for point in points if point not in self._decided[key]]

    def _decide(self, key: str, point: int) -> bool:
        """Decide the configuration at `point`; True when it stops now."""
        seeds = [history for history in self._history[key].values() if _value_at(history, point) is not None]
        mean = float(np.mean([_value_at(history, point) for history in seeds]))
        if self.rule == "asha":
            recorded = self._rung_means[point]
            cutoff = np.percentile(recorded, (1 - 1 / self.reduction_factor) * 100) if recorded else None
            recorded.append(mean)
            stop = cutoff is not None and mean < cutoff
            why = (f"mean over seeds {self._sign * mean:.4g} at rung {point} "
                   + ("(the first there)" if cutoff is None else
                      f"{'below' if stop else 'at or above'} the top-1/{self.reduction_factor} cutoff "
                      f"{self._sign * cutoff:.4g} of {len(recorded) - 1} configurations"))
        else:
            best = float(np.mean([max(value for time, value in history if time <= point) for history in seeds]))
            others = [self._running_average(other, point) for other in self._history if other != key]
            others = [value for value in others if value is not None]
            if len(others) < self.min_samples_required:
                return False
            median = float(np.median(others))
            stop = best < median
            why = (f"mean over seeds of the best so far {self._sign * best:.4g} at {self.time_attr} {point} "
                   f"{'below' if stop else 'at or above'} the median {self._sign * median:.4g} of "
                   f"{len(others)} other configurations' running averages")
        ending = self._finished[key] | {trial_id for trial_id in self._history[key]
                                        if self._last_report_is_next.get(trial_id)}
        if stop and ending:
            stop, why = False, f"{why}; goes on: {len(ending)} of its seeds finished or one report from the end"
        self.decisions.append(GroupDecision(key, point, stop, len(seeds), why))
        if stop:
            self._stopped.add(key)
        return stop

    def _note_progress(self, trial_id: str, result: dict) -> None:
        """Whether the trial's next report will be its last: its steps so far say how far one report goes."""
        step, total = result.get("step"), result.get("total_steps")
        if step is None or total is None:
            return
        previous = self._last_step.get(trial_id)
        self._last_step[trial_id] = step
        stride = step - previous if previous is not None and step > previous else 0
        self._last_report_is_next[trial_id] = step >= total or (stride > 0 and step + stride >= total)

    def _running_average(self, key: str, point: int) -> float | None:
        """A configuration's mean over its seeds of each seed's average value up to `point`, over the seeds that
        reported `point` or later; None without any."""
        averages = [np.mean([value for time, value in history if time <= point])
                    for history in self._history[key].values() if history[-1][0] >= point]
        return float(np.mean(averages)) if averages else None


def _value_at(history: list, point: int) -> float | None:
    """The value a seed reported at `point` (its first report at or after it); None before it got there."""
    for time, value in history:
        if time >= point:
            return value
    return None


def mean_and_standard_error(scores: list) -> tuple[float, float, int]:
    """(mean, standard error of the mean, n) over the scores that are numbers; nan where undefined."""
    values = np.array([score for score in scores if score is not None and not math.isnan(score)], dtype=float)
    if not len(values):
        return float("nan"), float("nan"), 0
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")
    return float(values.mean()), se, len(values)


def repeater_group(repeater: Repeater, trial_id: str):
    """The seeds' group of `trial_id` in Ray Tune's `Repeater`: its private `_trial_id_to_group` (no public API
    gives it), read here alone; a Ray release without it fails in one line naming it
    (tests/sweep/test_seed_groups.py checks it on the locked release)."""
    groups = getattr(repeater, "_trial_id_to_group", None)
    if groups is None:
        raise RuntimeError("ray.tune.search.Repeater._trial_id_to_group is gone from this Ray release: "
                           "sentsweep.sweep.search.seed_groups needs it to average a configuration's seeds")
    return groups[trial_id]


def optuna_trial(searcher, trial_id: str):
    """The Optuna trial behind Ray Tune's `OptunaSearch` trial `trial_id` (its private `_ot_trials`, read here
    alone); None for another searcher. An OptunaSearch without the mapping fails in one line naming it."""
    from ray.tune.search.optuna import OptunaSearch  # lazy: optuna

    if not isinstance(searcher, OptunaSearch):
        return None
    trials = getattr(searcher, "_ot_trials", None)
    if trials is None:
        raise RuntimeError("ray.tune.search.optuna.OptunaSearch._ot_trials is gone from this Ray release: "
                           "sentsweep.sweep.search.seed_groups needs it to give Optuna each configuration's seeds")
    return trials.get(trial_id)


class SeedAveragingRepeater(Repeater):
    """`Repeater` that gives its searcher the mean over a configuration's seeds and its standard error."""

    def on_trial_complete(self, trial_id: str, result: dict | None = None, **kwargs) -> None:
        group = repeater_group(self, trial_id)
        score = result.get(self.searcher.metric, np.nan) if result else np.nan
        group.report(trial_id, score)
        if not group.finished_reporting():
            return
        scores = group.scores()
        mean, se, n = mean_and_standard_error(scores)
        ot_trial = optuna_trial(self.searcher, group.primary_trial_id)
        if ot_trial is not None:  # OptunaSearch: the study keeps how sure each value is
            ot_trial.set_user_attr("seed_mean", mean)
            ot_trial.set_user_attr("seed_se", se)
            ot_trial.set_user_attr("seed_n", n)
            ot_trial.set_user_attr("seed_values", [float(score) for score in scores])
        metric = self.searcher.metric
        self.searcher.on_trial_complete(group.primary_trial_id,
                                        result={metric: mean, f"{metric}_se": se, f"{metric}_n": n}, **kwargs)
