"""`--search optuna --sampler rung-gp` on Ray Tune: new configurations proposed from each seed's score at every
evaluation of the configurations so far (`sentsweep.sweep.search.rung_model_sampler.RungModelSampler`), and a
configuration's seeds stopped together at a rung only on the seeds' paired test against the leader there.

- `RungScoreRepeater` (a `SeedAveragingRepeater`): keeps each seed's score (the selection metric) at every
  evaluation step after the first (step 0 is the untrained model) of each configuration. Once every seed of a
  configuration has its score at a step (or the configuration stops there), the configuration's Optuna trial gets
  them: its intermediate value at that step is their mean and its user attribute `RUNG_SEEDS_ATTRIBUTE` holds them
  in seed order, which is what the sampler fits its model to. A configuration stopped at a rung is told to Optuna
  as pruned (its rungs stay observations); one that ran out, as `SeedAveragingRepeater` tells it (its seed mean
  and standard error). Its state (the scores, the rungs decided, the stops) is a Ray Tune searcher's state: saved
  with the experiment and restored by `--resume`, with the Optuna study and its sampler.
- `RungSeedTestScheduler` (a Ray Tune scheduler, sibling of `SeedGroupScheduler`): the rungs are the first
  evaluation at or after each of `RUNGS` (fractions of a trial's steps, those of `--race-schedule steps`) before
  the last step. A rung is decided once every seed of the configuration that started (reported, or running) has
  reached it, and at least 2 have (as `SeedGroupScheduler` decides). The configuration is compared, once, with the
  leader there (of the other configurations with 2 seeds' scores at that step, the one with the best mean over its
  seeds there; none: it goes on) by the races' paired t over the seeds both have
  (`rung_model_sampler.seed_test_p`), one-sided, at `RACE_ALPHA` split over the rungs; only where that rejects is
  it stopped: its seeds at their next report, those that start later at their first, and its Optuna trial is told
  the scores its seeds had up to the rung. No rung tests a configuration one of whose seeds has finished (as
  `SeedGroupScheduler`: a stop would come too late, and would leave the finished seed's values out). Its
  `outcome` says, per configuration, whether and where it stopped and why, as a race's outcome is recorded in
  MLflow.

Both pickle as references to this process's objects for the Ray Tune run (as a race's searcher and scheduler do),
so a restored run (`Tuner.restore`) drives the sweep's own objects, which Ray Tune then gives the saved state.
"""

from __future__ import annotations

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from sentsweep.analysis.racing import ELIMINATED, RACE_ALPHA, TIED, ConfigStatus
from sentsweep.analysis.significance import MIN_SHARED_SEEDS
from sentsweep.analysis.step_racing import RUNGS, fraction_text
from sentsweep.random_seeds import TRIAL_INDEX_KEY, resolve_seed
from sentsweep.sweep.search.rung_model_sampler import RUNG_SEEDS_ATTRIBUTE, seed_test_p
from sentsweep.sweep.search.seed_groups import SeedAveragingRepeater, optuna_trial, repeater_group
from sentsweep.tracking.callback import config_hash

RUNG_STOP_ATTRIBUTE = "rung_stopped_at_step"  # the Optuna trial's user attribute of a configuration stopped at a rung


class RungScoreRepeater(SeedAveragingRepeater):
    """`SeedAveragingRepeater` that also gives its Optuna searcher each seed's score at every evaluation (module
    docstring); `run_name` names the Ray Tune run it is made for."""

    def __init__(self, searcher, repeat: int, run_name: str) -> None:
        super().__init__(searcher, repeat=repeat)
        self.run_name = run_name
        self.rung_scores: dict = {}  # primary trial id -> {step: {seed index: score}}
        self.seed_index: dict = {}  # trial id -> its seed's index in its configuration's seeds
        self.stops: dict = {}  # primary trial id -> (step, why): the configurations stopped at a rung
        self.decided: dict = {}  # primary trial id -> the rung fractions decided
        self.went_on: dict = {}  # primary trial id -> why a rung did not test it (a seed had finished)
        _MADE[("repeater", run_name)] = self

    def __reduce__(self):
        return made_for, ("repeater", self.run_name)

    def suggest(self, trial_id: str):
        config = super().suggest(trial_id)
        if isinstance(config, dict):
            self.seed_index[trial_id] = int(config.get(TRIAL_INDEX_KEY, 0))
        return config

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        self.note_result(trial_id, result)

    def note_result(self, trial_id: str, result: dict) -> str | None:
        """Keep the trial's score at its step (from the second evaluation on); once every seed of its
        configuration has one there, tell the Optuna trial. Returns the configuration's key (its first trial's
        id); None for a trial this repeater did not hand out. Telling the same result twice changes nothing."""
        if trial_id not in self.seed_index:
            return None
        key = repeater_group(self, trial_id).primary_trial_id
        step, value = result.get("step"), result.get(self.searcher.metric)
        if step is None or value is None or not step > 0 or not np.isfinite(value):
            return key
        at_step = self.rung_scores.setdefault(key, {}).setdefault(int(step), {})
        if self.seed_index[trial_id] in at_step:
            return key
        at_step[self.seed_index[trial_id]] = float(value)
        if len(at_step) == self.repeat:
            self._tell_rung(key, int(step))
        return key

    def stop(self, key: str, step: int, why: str) -> None:
        """Record that the configuration `key` stops at `step`, and why; its Optuna trial gets the scores of the
        seeds it has at each step up to `step` that it was not told yet, and the step."""
        self.stops[key] = (step, why)
        for at in sorted(self.rung_scores.get(key, {})):
            if at <= step:
                self._tell_rung(key, at)
        ot_trial = optuna_trial(self.searcher, key)
        if ot_trial is not None:
            ot_trial.set_user_attr(RUNG_STOP_ATTRIBUTE, step)

    def on_trial_complete(self, trial_id: str, result: dict | None = None, **kwargs) -> None:
        group = repeater_group(self, trial_id)
        if group.primary_trial_id not in self.stops:
            super().on_trial_complete(trial_id, result, **kwargs)
            return
        score = result.get(self.searcher.metric) if result else None
        group.report(trial_id, np.nan if score is None else score)
        if group.finished_reporting():  # no value: Optuna keeps it as pruned, with its rungs' values
            self.searcher.on_trial_complete(group.primary_trial_id, result=None)

    def _tell_rung(self, key: str, step: int) -> None:
        """The Optuna trial of configuration `key` told its seeds' scores at `step` (in seed order) and their mean,
        once."""
        ot_trial = optuna_trial(self.searcher, key)
        by_rung = dict(ot_trial.user_attrs.get(RUNG_SEEDS_ATTRIBUTE, {})) if ot_trial is not None else {}
        if ot_trial is None or str(step) in by_rung:
            return
        scores = self.rung_scores[key][step]
        by_rung[str(step)] = [scores[index] for index in sorted(scores)]
        ot_trial.set_user_attr(RUNG_SEEDS_ATTRIBUTE, by_rung)
        ot_trial.report(float(np.mean(by_rung[str(step)])), step)


class RungSeedTestScheduler(FIFOScheduler):
    """Stops a configuration's seeds at a rung only on their paired test against the rung's leader (module
    docstring), for the configurations of `repeater` (its `run_name` names this scheduler too)."""

    def __init__(self, repeater: RungScoreRepeater, rungs=RUNGS, alpha: float = RACE_ALPHA) -> None:
        super().__init__()
        self.repeater, self.rungs = repeater, tuple(sorted(rungs))
        self.alpha = alpha
        self.cells: dict = {}  # Ray trial id -> (config hash, seed) of every trial of the run
        _MADE[("scheduler", repeater.run_name)] = self

    def __reduce__(self):
        return made_for, ("scheduler", self.repeater.run_name)

    @property
    def rung_alpha(self) -> float:
        return self.alpha / len(self.rungs)

    def on_trial_add(self, tune_controller, trial: Trial) -> None:
        self.cells[trial.trial_id] = (config_hash(trial.config), str(resolve_seed(trial.config)))

    def on_trial_result(self, tune_controller, trial: Trial, result: dict) -> str:
        # Ray Tune tells the scheduler first and the searcher only when the trial goes on: the score is kept here
        key = self.repeater.note_result(trial.trial_id, result)
        if key is None:
            return TrialScheduler.CONTINUE
        if key not in self.repeater.stops and result.get("total_steps"):
            self._decide(tune_controller, key, int(result["total_steps"]))
        return TrialScheduler.STOP if key in self.repeater.stops else TrialScheduler.CONTINUE

    def debug_string(self) -> str:
        return (f"RungSeedTestScheduler: {len(self.repeater.stops)} of {len(self.repeater.rung_scores)} "
                "configurations stopped at a rung on their seeds' paired test")

    def _decide(self, tune_controller, key: str, total_steps: int) -> None:
        """Decide each rung of the configuration not decided yet whose step every seed of it that started has
        reached, with at least 2 of them (or all its seeds) there."""
        scores = self.repeater.rung_scores.get(key, {})
        reached = self._reached(tune_controller, key)
        decided = self.repeater.decided.setdefault(key, [])
        for fraction in self.rungs:
            step = next((step for step in sorted(scores) if step >= fraction * total_steps), None)
            if fraction in decided or step is None or step >= total_steps:
                continue
            there = len(scores[step])
            if min(reached.values(), default=-1) < step or there < min(MIN_SHARED_SEEDS, self.repeater.repeat):
                return  # a started seed is not there yet: decided when it is
            decided.append(fraction)
            if max(scores) >= total_steps:  # a seed finished: a stop comes too late
                self.repeater.went_on[key] = (f"no stop at step {step}: a seed had finished its {total_steps} steps "
                                              "before the seeds started reached that rung")
                continue
            why = self.verdict(key, step, scores[step], fraction, total_steps)
            if why is not None:
                self.repeater.stop(key, step, why)
                return

    def _reached(self, tune_controller, key: str) -> dict:
        """{Ray trial id: the last step it reported (-1: none after step 0)} of the configuration's trials that
        started (reported, or running), those ended by an error left out."""
        steps = {}
        statuses = {trial.trial_id: trial.status for trial in tune_controller.get_trials()}
        for trial_id, index in self.repeater.seed_index.items():
            if repeater_group(self.repeater, trial_id).primary_trial_id != key or statuses.get(trial_id) == Trial.ERROR:
                continue
            last = max((step for step, by_seed in self.repeater.rung_scores.get(key, {}).items() if index in by_seed),
                       default=-1)
            if last >= 0 or statuses.get(trial_id) == Trial.RUNNING:
                steps[trial_id] = last
        return steps

    def verdict(self, key: str, step: int, scores: dict, fraction: float, total_steps: int) -> str | None:
        """Why the configuration stops at `step` (its rung at `fraction` of `total_steps`), on `scores` {seed
        index: score there}; None where it goes on: no other configuration has 2 seeds' scores there, the leader
        there (the best mean over its seeds) is not ahead, or the paired test over the seeds both have does not
        reject."""
        others = [by_seed for other, by_rung in self.repeater.rung_scores.items() if other != key
                  and len(by_seed := by_rung.get(step, {})) >= MIN_SHARED_SEEDS]
        if not others:
            return None
        leader = max(others, key=lambda by_seed: float(np.mean(list(by_seed.values()))))
        own, lead = float(np.mean(list(scores.values()))), float(np.mean(list(leader.values())))
        p = seed_test_p(scores, leader)
        if lead <= own or not p < self.rung_alpha:
            return None
        return (f"at step {step} ({fraction_text(fraction)} of {total_steps} steps) its mean over {len(scores)} seeds "
                f"{own:.4g} is below the leader's there {lead:.4g}: paired t over the {len(set(scores) & set(leader))} "
                f"seeds both have, one-sided p = {p:.3g} < {self.rung_alpha:.3g} ({self.alpha:g} over "
                f"{len(self.rungs)} rungs)")

    def outcome(self) -> dict:
        """What the rungs decided, as a race's outcome is recorded (`RaceOutcome`'s fields): `status` {config hash:
        ConfigStatus} (ELIMINATED with why for a configuration stopped at a rung, TIED for one that ran out),
        `hashes` {config hash: itself}, `counted` every (config hash, seed) cell, `stopped` {Ray trial id: step}
        of every trial of a stopped configuration."""
        groups = {}
        for trial_id, cell in self.cells.items():
            if trial_id in self.repeater.seed_index:
                groups.setdefault(repeater_group(self.repeater, trial_id).primary_trial_id, []).append(
                    (trial_id, cell))
        status, stopped = {}, {}
        rungs = ", ".join(map(fraction_text, self.rungs))
        went_on = (f"not significantly worse than the leader at any rung it reached ({rungs} of the steps): paired "
                   f"t over the seeds, one-sided, {self.alpha:g} over {len(self.rungs)} rungs")
        for key, trials in groups.items():
            hash_ = trials[0][1][0]
            step, why = self.repeater.stops.get(key, (None, self.repeater.went_on.get(key, went_on)))
            status[hash_] = ConfigStatus(len(trials), 0, float("nan"), TIED if step is None else ELIMINATED, why,
                                         float("nan"))
            if step is not None:
                stopped |= {trial_id: step for trial_id, _ in trials}
        return {"status": status, "hashes": {key: key for key in status},
                "counted": set(self.cells.values()), "stopped": stopped}


_MADE: dict = {}


def made_for(kind: str, run_name: str):
    """The repeater or scheduler (`kind`) this process made for Ray Tune run `run_name` (a restored run's
    `tuner.pkl` names it)."""
    try:
        return _MADE[(kind, run_name)]
    except KeyError:
        raise RuntimeError(f"no rung-gp {kind} for Ray Tune run {run_name!r} in this process: such a run is "
                           "restored by the sweep command that made it (--resume)") from None


def rung_search(searcher, repeat: int, run_name: str) -> tuple[RungScoreRepeater, RungSeedTestScheduler]:
    """The searcher and scheduler of `--sampler rung-gp` for Ray Tune run `run_name`: `searcher` (an `OptunaSearch`
    with the `RungModelSampler`) repeated over the `repeat` seeds, and the scheduler that stops at the rungs."""
    repeater = RungScoreRepeater(searcher, repeat, run_name)
    return repeater, RungSeedTestScheduler(repeater)

