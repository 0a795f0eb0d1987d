"""Model-based multi-fidelity over steps and seeds, BOHB-style: new configurations proposed by a model of the scores
the configurations had at a rung (an evaluation part-way through training), and configurations stopped at a rung
only on their seeds' test. `--search optuna --sampler rung-gp` runs them on Ray Tune
(`sentsweep.sweep.search.rung_search`: the seeds' scores told to the study, the stops taken by a scheduler); the
simulation of `benchmarks/searchers.py` ("rung-gp") runs them on an Optuna study.

- `RungModelSampler` (Optuna sampler). A configuration's observation at rung t is the mean over its seeds of their
  scores at t, with its standard error (the Optuna trial's intermediate value at step t and its user attribute
  RUNG_SEEDS_ATTRIBUTE, the seeds' scores by rung). As BOHB (Falkner, Klein, Hutter 2018, section 3.2) the model is
  fitted at the largest rung with at least MIN_POINTS configurations observed there (a stopped configuration counts
  at the rungs it reached, a running one at those its seeds all reported), so early rungs steer the search before
  any configuration has finished. The model is the noise-aware GP of `sentsweep.sweep.search.noise_aware_sampler`
  (each mean with its standard error as noise, Thompson sampling; BOHB's is a kernel density estimate); before
  any rung has MIN_POINTS, configurations are random.
- `SeedTestPruner` (Optuna pruner). At each of its rungs, once a configuration's seeds have scores there, it is
  compared with the leader there (the configuration with the best mean over its seeds at that rung) by the races'
  paired t over the seeds both have (`seed_test_p`: `sentsweep.analysis.racing.one_sided_p_values`, one-sided, the
  leader better), at the race's level split over the rungs (`sentsweep.analysis.racing.RACE_ALPHA` / number of
  rungs, as `--race-schedule steps` splits it); it is stopped only where that test rejects. A configuration that
  is not significantly worse goes on, however far behind its mean is.

What it assumes: the order of configurations at a rung says something about their order at the end (the model is
fitted there), and seeds are shared across configurations (seed k of every configuration is one draw of the same
randomness: the test pairs them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from sentsweep.analysis.racing import RACE_ALPHA, one_sided_p_values
from sentsweep.analysis.step_racing import RUNGS, fraction_text
from sentsweep.sweep.search.noise_aware_sampler import NoiseAwareGPSampler

MIN_POINTS = 4  # configurations observed at a rung before the model is fitted there (the GP sampler's start)
RUNG_SEEDS_ATTRIBUTE = "rung_seed_scores"  # {str(rung): [each seed's score at that rung]}


def rung_observations(trials: Sequence, search_space: dict) -> dict[int, list[tuple]]:
    """{rung: [(trial, mean over its seeds, standard error)]} of the trials over the space: each trial's
    intermediate values, a completed trial also at its last step, with its value."""
    by_rung: dict[int, list[tuple]] = {}
    for trial in trials:
        if not all(name in trial.params for name in search_space):
            continue
        seeds = trial.user_attrs.get(RUNG_SEEDS_ATTRIBUTE, {})
        values = dict(trial.intermediate_values)
        if trial.value is not None and values:
            values[max(values)] = trial.value
        for rung, value in values.items():
            scores = seeds.get(str(rung), [])
            se = float(np.std(scores, ddof=1) / math.sqrt(len(scores))) if len(scores) > 1 else math.nan
            by_rung.setdefault(int(rung), []).append((trial, float(value), se))
    return by_rung


def model_rung(by_rung: dict[int, list[tuple]]) -> int | None:
    """The largest rung with at least MIN_POINTS observations; None where none has them."""
    enough = [rung for rung, observed in by_rung.items() if len(observed) >= MIN_POINTS]
    return max(enough) if enough else None


class RungModelSampler(NoiseAwareGPSampler):
    """The noise-aware GP fitted at the largest rung with enough configurations (module docstring)."""

    def observations(self, study, search_space: dict) -> tuple[list, np.ndarray, np.ndarray] | None:
        from optuna.trial import TrialState

        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
        by_rung = rung_observations(trials, search_space)
        rung = model_rung(by_rung)
        if rung is None:
            return None
        observed = by_rung[rung]
        return ([trial for trial, _, _ in observed], np.array([value for _, value, _ in observed], dtype=float),
                np.array([se for _, _, se in observed], dtype=float))


def seed_test_p(scores, leader) -> float:
    """The one-sided p of "`leader` better than `scores`" by the races' paired t
    (`sentsweep.analysis.racing.one_sided_p_values`, no tolerance) over the seeds both have: each a {seed: score}
    mapping, or a sequence whose k-th score is seed k's; nan with fewer than 2 shared seeds. The same difference on
    every seed is as significant as it gets (p 0) where positive, no evidence where not."""
    values = {"leader": _by_seed(leader), "other": _by_seed(scores)}
    shared = sorted(set(values["leader"]) & set(values["other"]))
    p_values, _ = one_sided_p_values(values, "leader", ["other"], shared, 1.0, "paired t", 0.0)
    return float(p_values[0])


def _by_seed(scores) -> dict:
    return {seed: float(score) for seed, score in (scores.items() if isinstance(scores, Mapping) else
                                                   enumerate(scores))}


def significantly_worse(scores: Sequence[float], leader: Sequence[float], alpha: float) -> bool:
    """Whether `scores` are below `leader`'s by the races' paired one-sided t (`seed_test_p`) at level `alpha`;
    never with fewer than 2 pairs."""
    p = seed_test_p(scores, leader)
    return bool(p == p and p < alpha)


def _optuna_pruner_base():
    from optuna.pruners import BasePruner

    return BasePruner


class SeedTestPruner(_optuna_pruner_base()):
    """Stops a configuration at one of `rungs` (steps) only where the seeds' test says it is worse than the leader
    there (module docstring); `alpha` is split over the rungs."""

    def __init__(self, rungs: Sequence[int], alpha: float = RACE_ALPHA) -> None:
        self.rungs = sorted(set(int(rung) for rung in rungs))
        self.alpha = alpha

    def prune(self, study, trial) -> bool:
        step = trial.last_step
        if step not in self.rungs:
            return False
        key = str(step)
        scores = trial.user_attrs.get(RUNG_SEEDS_ATTRIBUTE, {}).get(key)
        if not scores:
            return False
        others = [other.user_attrs.get(RUNG_SEEDS_ATTRIBUTE, {}).get(key) for other in study.get_trials(deepcopy=False)
                  if other.number != trial.number]
        others = [other for other in others if other]
        if not others:
            return False
        leader = max(others, key=lambda values: float(np.mean(values)))
        if float(np.mean(leader)) <= float(np.mean(scores)):
            return False
        return significantly_worse(scores, leader, self.alpha / len(self.rungs))


def description(seed: int) -> str:
    """`--sampler rung-gp` as the card states it: the model, the stopping rule (at the rungs `RUNGS` of
    `sentsweep.analysis.step_racing`, as `sentsweep.sweep.search.rung_search` stops) and what each assumes."""
    return (f"RungModelSampler(seed={seed}): the noise-aware GP fitted at the largest evaluation step where at least "
            f"{MIN_POINTS} configurations have their seeds' scores (each mean with its standard error as noise; before "
            f"that, random), assuming a smooth score there whose order of configurations the final step keeps; a "
            f"configuration's seeds stopped together at a rung (the first evaluation at or after "
            f"{' and '.join(map(fraction_text, RUNGS))} of the steps) only where the races' paired t over the seeds "
            f"says it is worse than the leader there, one-sided at {RACE_ALPHA:g} over {len(RUNGS)} rungs, assuming "
            f"seeds shared across configurations (seed k of each is one draw of the same randomness)")
