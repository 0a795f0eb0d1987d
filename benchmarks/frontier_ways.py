"""The peers' ways to an answer as schedules for `sentsweep.analysis.schedule.simulate_schedule`, and the scores at
any fraction of a trial's steps that they and the race over steps read (benchmarks/frontier.py).

- `AshaBrackets`: Ray Tune's `ASHAScheduler` over a grid with the seed as one more axis, with its `brackets`
  (asynchronous Hyperband: bracket s starts judging at the grace period x reduction factor^s);
- `OptunaPruned`: an Optuna study over the grid's configurations, one Optuna trial per configuration training its
  seeds one after the other in one slot (seeds as instances), reporting after each seed to a real Optuna pruner
  (`SuccessiveHalvingPruner`, `HyperbandPruner`: the mean over the seeds so far at step = seeds done;
  `WilcoxonPruner`: each seed's value at step = the seed), pruned where the pruner says so;
- `RungValues`: a trial's value at a fraction of its steps, drawn once per (trial, fraction) and shared by every
  way in a simulated sweep.
"""

from __future__ import annotations

import bisect
import math
from collections import deque

import numpy as np

from sentsweep.analysis.racing import CONTINUE, STOP
from sentsweep.analysis.schedule import FixedGrid

RUNG_CORRELATION = 0.5  # of a trial's noise at a rung with its final noise (an assumption: no learning curves given)


class RungValues:
    """{(config, seed): [value at each fraction]} on demand: the configuration's true mean, less a gap common to
    every configuration (`gap(fraction)`, which cancels in every comparison at one fraction), plus noise of sd
    `noise_sd` correlated RUNG_CORRELATION with the trial's final noise; each (trial, fraction) drawn once."""

    def __init__(self, scores: dict, means: dict, noise_sd: float, rng: np.random.Generator):
        self._scores, self._means, self._noise_sd, self._rng = scores, means, noise_sd, rng
        self._drawn: dict = {}

    @staticmethod
    def gap(fraction: float) -> float:
        return 0.5 * (1 / fraction - 1)

    def value(self, trial: tuple, fraction: float) -> float:
        key = (trial, round(fraction, 12))
        if key not in self._drawn:
            config, _ = trial
            shared = (self._scores[trial] - self._means[config]) * math.sqrt(RUNG_CORRELATION)
            own = self._rng.normal(0.0, self._noise_sd) * math.sqrt(1 - RUNG_CORRELATION)
            self._drawn[key] = self._means[config] - self.gap(fraction) + shared + own
        return self._drawn[key]

    def table(self, fractions) -> dict:
        """{trial: [its value at each of `fractions`]} for every trial of the scores."""
        return {trial: [self.value(trial, fraction) for fraction in fractions] for trial in self._scores}


def asha_rungs(grace: float, reduction_factor: int, brackets: int = 1) -> tuple:
    """Every fraction of the steps at which some bracket judges: grace x reduction_factor^k below 1."""
    rungs, fraction = [], grace
    while fraction < 1 - 1e-9:
        rungs.append(fraction)
        fraction *= reduction_factor
    if len(rungs) < brackets:
        raise ValueError(f"brackets={brackets}: grace {grace:g} x {reduction_factor}^k gives {len(rungs)} rungs")
    return tuple(rungs)


def sorted_quantile(values: list, quantile: float) -> float:
    """`np.percentile(values, 100 * quantile)` (linear interpolation) of `values` already sorted."""
    position = (len(values) - 1) * quantile
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (position - low) * (values[high] - values[low])


class AshaBrackets:
    """Ray Tune's ASHAScheduler (`grace_period`, `reduction_factor`, `brackets`) over `trials` ((config, seed), in
    the grid's order), as a schedule: trials handed out in order, bracket by round robin (Ray Tune draws it), each
    trial judged alone at its bracket's rungs against the values recorded there before it, stopped below their
    (1 - 1/reduction_factor) quantile (the first at a rung goes on), as `_Bracket.on_result` does. `answer`: the
    configuration with the best mean over its seeds that trained to the end."""

    def __init__(self, trials: list, grace: float, reduction_factor: int, brackets: int = 1):
        self.rungs = asha_rungs(grace, reduction_factor, brackets)
        self.reduction_factor = reduction_factor
        self._grid = FixedGrid(trials)
        self._bracket = {trial: index % brackets for index, trial in enumerate(trials)}
        self._recorded: dict = {(bracket, rung): [] for bracket in range(brackets) for rung in self.rungs}
        self._finals: dict = {}

    def next_trial(self):
        return self._grid.next_trial()

    def reached(self, config, seed, done, value, step=None) -> str:
        bracket = self._bracket[(config, seed)]
        if self.rungs.index(done) < bracket:
            return CONTINUE  # not one of its bracket's rungs
        recorded = self._recorded[(bracket, done)]
        cutoff = sorted_quantile(recorded, 1 - 1 / self.reduction_factor) if recorded else None
        bisect.insort(recorded, value)
        return STOP if cutoff is not None and value < cutoff else CONTINUE

    def record(self, config, seed, value) -> None:
        if value is not None:
            self._finals.setdefault(config, []).append(value)

    def record_stopped(self, config, seed) -> None:
        """(A stopped trial leaves nothing to the answer.)"""

    def answer(self):
        return max(self._finals, key=lambda config: np.mean(self._finals[config])) if self._finals else None


class OptunaPruned:
    """An Optuna study of `configs` (in order, one Optuna trial each) whose trials train `seeds` one after the
    other in one slot, `pruner` deciding after each seed (module docstring; `report`: "mean" or "each"). As a
    schedule: a free slot goes to the next seed of the configuration whose seed just ended, else to the next
    configuration. `answer`: the best complete trial's configuration (Optuna's `best_trial`)."""

    def __init__(self, configs: list, seeds: list, pruner, report: str = "mean"):
        import optuna

        if report not in ("mean", "each"):
            raise ValueError(f"report={report!r}: expected 'mean' or 'each'")
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self._optuna, self._report = optuna, report
        self._study = optuna.create_study(direction="maximize", pruner=pruner)
        self._seeds = list(seeds)
        self._waiting = deque(configs)
        self._continuing: deque = deque()
        self._trials: dict = {}
        self._values: dict = {}

    def next_trial(self):
        if self._continuing:
            return self._continuing.popleft()
        if not self._waiting:
            return None
        config = self._waiting.popleft()
        self._trials[config] = self._study.ask()
        self._values[config] = []
        return config, self._seeds[0]

    def record(self, config, seed, value) -> None:
        values = self._values[config]
        values.append(value)
        trial = self._trials[config]
        if len(values) == len(self._seeds):
            self._study.tell(trial, float(np.mean(values)))
            return
        trial.report(float(np.mean(values)) if self._report == "mean" else value,
                     len(values) if self._report == "mean" else seed)
        if trial.should_prune():
            self._study.tell(trial, state=self._optuna.trial.TrialState.PRUNED)
        else:
            self._continuing.append((config, self._seeds[len(values)]))

    def answer(self):
        complete = {config: np.mean(values) for config, values in self._values.items()
                    if len(values) == len(self._seeds)}
        return max(complete, key=complete.get) if complete else None
