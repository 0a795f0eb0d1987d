"""Racing over seeds by rounds: run more seeds only for the configurations still in contention.

`Race` starts every configuration on the first `initial_seeds` seeds; after each round (every trial of it
recorded) it drops the configurations significantly worse than the current best (pooled t by default, Holm over
the round's comparisons, at `alpha`) and runs the rest on the next seed, until one configuration is left, the last
seed is run, or the next round would pass `max_trials`. Every configuration gets the same seed ids, so comparisons
are paired. A failed trial is recorded as None: not retried, counted towards `max_trials`. `Race` is a pure,
deterministic state machine (no Ray, no MLflow, no randomness); `RaceBook` is the bookkeeping every race shares
(settings, values, states, the read side: `finished`, `best`, `status`, `eliminated`, `pending`).

    >>> race = Race(["a", "b", "c"], seeds=[0, 1, 2, 3, 4])
    >>> scores = {"a": 80.0, "b": 70.0, "c": 79.5}
    >>> while not race.finished:
    ...     for config, seed in race.next_trials():
    ...         race.record(config, seed, scores[config] + 0.1 * seed * (-1) ** seed)
    >>> race.best, race.eliminated, race.trials_issued
    ('a', ['b', 'c'], 6)

The test, the correction, the tolerance, what an elimination means and how `--race-alpha` is chosen: docs/racing.md,
"The round race"."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sentsweep.analysis.significance import CORRECTIONS, MIN_SHARED_SEEDS, P_LABELS, adjust_p_values

RACING, BEST, TIED, ELIMINATED = "racing", "best", "tied with best", "eliminated"
# What the driver does with a trial after one of its intermediate evaluations (RaceBook.reached).
CONTINUE, PAUSE, STOP = "continue", "pause", "stop"
TESTS = ("paired t", "pooled t")
# The default level of a race's eliminations (docs/racing.md, "Level"): a compute decision, not a claim.
RACE_ALPHA = 0.20
TEST_OPTIONS = {"pooled": "pooled t", "paired": "paired t"}  # the command line's names (--race-test)


@dataclass(frozen=True)
class ConfigStatus:
    n: int  # seeds with a value
    failed: int  # seeds whose trial failed
    mean: float  # over its seeds with a value; nan without any
    state: str  # RACING, BEST, TIED or ELIMINATED
    why: str  # the reason for the state, in words
    p_adjusted: float  # the last test's adjusted one-sided p (nan: the leader, or not tested)


class RaceBook:
    """What every race keeps and answers, whatever its schedule (`Race` here, by rounds;
    `sentsweep.analysis.async_racing.AsyncRace`, by levels without barriers): the settings, checked before any
    trial; each configuration's values and failed seeds; its state and the reason for it; the trials handed out
    and those still to come back; and the protocol's read side (`finished`, `trials_issued`, `pending`, `best`,
    `status`, `eliminated`). A subclass decides what to hand out (`next_trial`) and when to decide (`record`)."""

    def __init__(self, configs, seeds: list[int], initial_seeds: int = 2, alpha: float = RACE_ALPHA,
                 correction: str = "holm", max_trials: int | None = None, higher_is_better: bool = True,
                 test: str = "pooled t", tolerance: float = 0.0):
        self.configs = list(configs)
        self.seeds = list(seeds)
        if not self.configs or len(set(self.configs)) != len(self.configs):
            raise ValueError("a race needs at least one configuration, without repeats")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError("a race needs at least one seed, without repeats")
        if not 1 <= initial_seeds <= len(self.seeds):
            raise ValueError(f"initial_seeds={initial_seeds}: expected 1..{len(self.seeds)} (the seeds given)")
        if correction not in CORRECTIONS:
            raise ValueError(f"unknown correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
        if test not in TESTS:
            raise ValueError(f"unknown test {test!r}: expected one of {', '.join(TESTS)}")
        if not 0 < alpha < 1:
            raise ValueError(f"alpha={alpha}: expected 0 < alpha < 1")
        if not tolerance >= 0:
            raise ValueError(f"tolerance={tolerance}: expected a difference >= 0 in the metric's units")
        if max_trials is not None and max_trials < len(self.configs) * initial_seeds:
            raise ValueError(f"max_trials={max_trials} is below the first round's {len(self.configs)} configs x "
                             f"{initial_seeds} seeds = {len(self.configs) * initial_seeds} trials")
        self.initial_seeds, self.alpha, self.correction = initial_seeds, alpha, correction
        self.max_trials, self.higher_is_better, self.test = max_trials, higher_is_better, test
        self.tolerance = float(tolerance)
        self._sign = 1.0 if higher_is_better else -1.0
        self._values: dict = {config: {} for config in self.configs}
        self._failed: dict = {config: set() for config in self.configs}
        self._state = dict.fromkeys(self.configs, RACING)
        self._alive_now: list | None = None  # _alive()'s answer until the next elimination
        self._why = dict.fromkeys(self.configs, "not started")
        self._p = dict.fromkeys(self.configs, float("nan"))
        self._outstanding: dict = {}  # handed out, not recorded: {trial: None}, in the order handed out
        self._paused: dict = {}  # (config, seed) -> the rungs it had reached when it paused (a race over steps)
        self._stopped: set = set()  # trials the driver stopped at the race's request (`record_stopped`)
        self._trials = 0
        self._finished = False

    # --- what the runner reads -----------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once the race has ended (docs/racing.md); status() then gives the final states."""
        return self._finished

    @property
    def trials_issued(self) -> int:
        return self._trials

    @property
    def best(self):
        """The leader (best mean among the configurations not eliminated); None before any value."""
        return self._leader(self._alive())

    @property
    def eliminated(self) -> list:
        """The configurations eliminated so far, in the input's order (what status() says, without p-values)."""
        return [config for config in self.configs if self._state[config] == ELIMINATED]

    def pending(self) -> list[tuple]:
        """Trials issued and not yet recorded, in issue order."""
        return list(self._outstanding)

    @property
    def running_count(self) -> int:
        """Trials handed out, not recorded and not paused: those holding a slot."""
        return len(self._outstanding) - len(self._paused)

    def unneeded(self) -> list[tuple]:
        """Trials handed out and not recorded (running or paused) whose results the race will not use: those of an
        eliminated configuration, and every one once the race has finished (a seed run ahead, which no decision
        counts). The driver stops them and tells `record_stopped`; a result that still arrives is accepted."""
        return [trial for trial in self.pending() if self._finished or self._state[trial[0]] == ELIMINATED]

    def reached(self, config, seed, done: float, value, step: int | None = None) -> str:
        """Trial (config, seed), handed out and not recorded, was evaluated at `done` (0 < done < 1) of its training
        steps (`step`, where the driver knows it), `value` its selection metric so far: what the driver does with
        it, STOP when the race no longer needs it (`unneeded`), else CONTINUE. A race over steps
        (`sentsweep.analysis.step_racing.StepRace`) also records the value and may say PAUSE."""
        self._check_outstanding(config, seed)
        return STOP if self._finished or self._state[config] == ELIMINATED else CONTINUE

    def resumable(self) -> list[tuple]:
        """Paused trials to resume in a free slot, first first; a free slot goes to them before `next_trial`
        (which answers None while there are any). Only a race over steps pauses trials."""
        return []

    def resume(self, config, seed) -> None:
        """Trial (config, seed), paused, runs again (the driver resumed it, or found it running: a restored run)."""
        self._paused.pop((config, seed), None)

    def record_stopped(self, config, seed) -> None:
        """Trial (config, seed), which the driver stopped at the race's request (`unneeded`, or `reached` said
        STOP), has ended: it holds no slot, and no value is recorded for it."""
        self._check_outstanding(config, seed)
        self._outstanding.pop((config, seed))
        self._paused.pop((config, seed), None)
        self._stopped.add((config, seed))

    @property
    def trials_stopped(self) -> int:
        """Trials the driver stopped at the race's request before their end."""
        return len(self._stopped)

    def was_stopped(self, config, seed) -> bool:
        """Whether trial (config, seed) was stopped at the race's request (`record_stopped`)."""
        return (config, seed) in self._stopped

    def status(self) -> dict:
        """{config: ConfigStatus}, in the input's order, on each configuration's counted seeds (`counted_seeds`)."""
        statuses = {}
        for config, seeds in self.counted_seeds().items():
            values = [self._values[config][seed] for seed in seeds if seed in self._values[config]]
            mean = sum(values) / len(values) if values else float("nan")
            statuses[config] = ConfigStatus(len(values), len(seeds) - len(values), mean, self._state[config],
                                            self._why[config], self._p_value(config))
        return statuses

    def counted_seeds(self) -> dict:
        """{config: the seeds whose results count for it, in the order of `seeds`}: every seed with a result (a
        value or a failure); AsyncRace leaves out a seed run ahead past the level that decided the configuration,
        whose running depended on the order results came in."""
        return {config: [seed for seed in self.seeds if seed in self._values[config] or seed in self._failed[config]]
                for config in self.configs}

    # --- shared bookkeeping --------------------------------------------------------------------------------

    def _p_value(self, config) -> float:
        """The p-value status() shows for `config` (a subclass may compute it only when asked)."""
        return self._p[config]

    def _hand_out(self, trials: list) -> None:
        self._trials += len(trials)
        self._outstanding.update(dict.fromkeys(trials))

    def _check_outstanding(self, config, seed) -> None:
        """A ValueError unless trial (config, seed) was handed out and has not ended."""
        if (config, seed) not in self._outstanding:
            issued = config in self._values and (seed in self._values[config] or seed in self._failed[config]
                                                 or (config, seed) in self._stopped)
            raise ValueError(f"trial ({config!r}, seed {seed!r}) was "
                             f"{'already recorded' if issued else 'not issued by this race'}")

    def _take(self, config, seed, value) -> None:
        """Stores the result of an outstanding trial (None or NaN: failed); one not handed out, or already
        recorded, is an error."""
        self._check_outstanding(config, seed)
        self._outstanding.pop((config, seed))
        self._paused.pop((config, seed), None)
        if value is None or np.isnan(float(value)):
            self._failed[config].add(seed)
        else:
            self._values[config][seed] = float(value)

    def _alive(self) -> list:
        """The configurations not eliminated, in the input's order (kept until the next elimination)."""
        if self._alive_now is None:
            self._alive_now = [config for config in self.configs if self._state[config] != ELIMINATED]
        return self._alive_now

    def _mean(self, config) -> float:
        values = self._values[config]
        return sum(values.values()) / len(values) if values else float("nan")

    def _leader(self, configs: list):
        scored = [config for config in configs if self._values[config]]
        return max(scored, key=lambda config: self._sign * self._mean(config)) if scored else None

    @property
    def _worse(self) -> str:
        """What an elimination says of a configuration, before the leader's name."""
        if self.tolerance:
            return f"significantly unable to beat by {self.tolerance:g} or more"
        return "significantly worse than"

    def _eliminate(self, config, why: str) -> None:
        self._state[config], self._why[config] = ELIMINATED, why
        self._alive_now = None

    def _end(self, leader, reason: str, tied: str) -> None:
        """Finishes the race: the leader is BEST for `reason`, the other configurations alive TIED for `tied`."""
        self._finished = True
        for config in self._alive():
            if config == leader:
                self._state[config], self._why[config] = BEST, reason
            else:
                self._state[config], self._why[config] = TIED, f"{tied}; {self._why[config]}"

    def _end_on_budget(self, leader) -> None:
        """Finishes the race on its trial budget: the leader best, the other configurations alive tied."""
        seeds = len(self._values[leader])
        self._end(leader, f"trial budget reached: best mean of the {len(self._alive())} configs left after {seeds} "
                          f"seeds ({self._trials} of {self.max_trials} trials run)",
                  f"trial budget reached after {seeds} seeds")

    # --- the round race's test, on the values of some seeds ---------------------------------------------------

    def _test_against_leader(self, alive: list, seeds: list):
        """The round race's test (docs/racing.md) on the values of `alive` on `seeds`: every configuration
        against the leader (the best mean there), one-sided, the p-values adjusted together, each one below alpha
        eliminated; the others and the leader say why they stay. Returns the leader (None without a value)."""
        on_seeds = set(seeds)
        values = {config: {s: v for s, v in self._values[config].items() if s in on_seeds} for config in alive}
        scored = [config for config in alive if values[config]]
        if not scored:
            return None
        leader = max(scored, key=lambda config: self._sign * sum(values[config].values()) / len(values[config]))
        others = [config for config in alive if config != leader]
        p_values, shared_counts = one_sided_p_values(values, leader, others, self.seeds, self._sign, self.test,
                                                     self.tolerance)
        adjusted = adjust_p_values(p_values, self.correction)
        label = P_LABELS[self.correction]
        self._p[leader] = float("nan")
        self._why[leader] = f"leading after {len(values[leader])} seeds"
        for config, p, shared in zip(others, adjusted, shared_counts):
            self._p[config] = float(p)
            if np.isnan(p):
                self._why[config] = (f"not tested: {shared} seed{'s' * (shared != 1)} shared with {leader} "
                                     f"(a paired test needs {MIN_SHARED_SEEDS})")
            elif p < self.alpha:
                self._eliminate(config, f"{self._worse} {leader} after {shared} seeds "
                                        f"({label} = {p:.2g} < {self.alpha:g})")
            else:
                self._why[config] = f"not {self._worse} {leader} after {shared} seeds ({label} = {p:.2g})"
        return leader


class Race(RaceBook):
    """A race of `configs` (hashable keys: a config hash, a tuple of params) over `seeds`, by rounds (see the
    docs/racing.md). Use: `while not race.finished: for config, seed in race.next_trials(): ...;
    race.record(...)`, or slot by slot with `next_trial`."""

    def __init__(self, configs, seeds: list[int], **settings):
        super().__init__(configs, seeds, **settings)
        self._unissued: list = []  # the current round's trials not handed out yet, in issue order
        self._seeds_used = 0  # seed ids issued so far: seeds[:_seeds_used]

    @property
    def seeds_issued(self) -> list[int]:
        return self.seeds[:self._seeds_used]

    def next_trials(self) -> list[tuple]:
        """The (config, seed) trials to run now: the first round (every configuration x the first
        `initial_seeds` seeds, seed by seed) or the next seed for every configuration still racing (or what
        `next_trial` has not handed out of the current round). Empty while a round still has trials to record
        (each trial is handed out once) and once the race is finished."""
        if not self._unissued:
            self._start_round()
        trials, self._unissued = self._unissued, []
        self._hand_out(trials)
        return trials

    def next_trial(self) -> tuple | None:
        """One (config, seed) trial for a free slot, in the order `next_trials` gives them; None while every
        trial of the current round is out and some result is still to come (the round's barrier), and once the
        race is finished."""
        if not self._unissued:
            self._start_round()
        if not self._unissued:
            return None
        trial = self._unissued.pop(0)
        self._hand_out([trial])
        return trial

    def record(self, config, seed, value) -> None:
        """The result of trial (config, seed): a number, or None (or NaN) for a failed trial. The round's last
        result closes the round: eliminations, then the end or the next round (docs/racing.md)."""
        self._take(config, seed, value)
        if not self._outstanding and not self._unissued:
            self._close_round()

    # --- the round's decisions -----------------------------------------------------------------------------

    def _start_round(self) -> None:
        """Puts the next round's trials in `_unissued`, unless the race is finished or a round is still running."""
        if self._finished or self._outstanding:
            return
        if self._seeds_used == 0:
            new_seeds = self.seeds[:self.initial_seeds]
        else:
            new_seeds = [self.seeds[self._seeds_used]]
        alive = self._alive()
        self._unissued = [(config, seed) for seed in new_seeds for config in alive]
        self._seeds_used += len(new_seeds)
        for config in alive:
            self._why[config] = f"running seed{'s' * (len(new_seeds) > 1)} {', '.join(map(str, new_seeds))}"

    def _close_round(self) -> None:
        alive = self._alive()
        for config in alive:
            if not self._values[config]:
                self._eliminate(config, f"every trial failed ({len(self._failed[config])} seeds)")
        leader = self._test_against_leader(self._alive(), self.seeds_issued)
        if leader is None:
            self._finished = True
            return
        self._decide_end(leader)

    def _decide_end(self, leader) -> None:
        alive = self._alive()
        seeds = len(self._values[leader])
        if len(alive) == 1:
            reason = f"the only config left after {seeds} seeds" if len(self.configs) > 1 else "the only config"
            tied = ""  # (nobody else is left)
        elif self._seeds_used == len(self.seeds):
            reason = f"best mean of the {len(alive)} configs left at the maximum of {len(self.seeds)} seeds"
            tied = f"tied with the best at the maximum of {len(self.seeds)} seeds"
        elif self.max_trials is not None and self._trials + len(alive) > self.max_trials:
            self._end_on_budget(leader)
            return
        else:
            return
        self._end(leader, reason, tied)


def pooled_variance(table: np.ndarray) -> tuple[float, int]:
    """Residual variance s^2, and its degrees of freedom, of the additive model x_cs = mu + config_c + seed_s + e_cs
    fitted by least squares to a configurations x seeds table (NaN: no value): the two-way ANOVA without
    interaction, blocks = seeds. A complete table is double-centred ((k - 1)(n - 1) degrees of freedom); one with
    gaps goes through the design matrix (N - rank degrees of freedom). (nan, df) when df < 1."""
    present = ~np.isnan(table)
    if present.all():
        residual_df = (table.shape[0] - 1) * (table.shape[1] - 1)
        if residual_df < 1:
            return float("nan"), residual_df
        residuals = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
        return float((residuals ** 2).sum() / residual_df), residual_df
    rows, columns = np.nonzero(present)
    design = np.zeros((len(rows), table.shape[0] + table.shape[1]))
    design[np.arange(len(rows)), rows] = 1.0
    design[np.arange(len(rows)), table.shape[0] + columns] = 1.0
    target = table[rows, columns]
    coefficients, _, rank, _ = np.linalg.lstsq(design, target, rcond=None)
    residual_df = len(rows) - int(rank)
    if residual_df < 1:
        return float("nan"), residual_df
    residuals = target - design @ coefficients
    return float(residuals @ residuals / residual_df), residual_df


def one_sided_p_values(values: dict, leader, others: list, seeds: list, sign: float, test: str,
                       tolerance: float) -> tuple[list, list]:
    """One-sided p-values of "leader better than c" for each c of `others` (nan where fewer than 2 seeds are
    shared), and the number of shared seeds of each, on `values` ({config: {seed: value}}, every
    configuration compared): `test` a name of TESTS, on `seeds` in their order, `sign` 1 where higher is better
    (-1 where lower is), `tolerance` the difference the leader must beat (docs/racing.md)."""
    lead = values[leader]
    means, spreads, counts, testable, shared_counts = [], [], [], [], []
    for index, config in enumerate(others):
        own = values[config]
        d = [sign * (lead[s] - own[s]) for s in seeds if s in lead and s in own]
        shared_counts.append(len(d))
        if len(d) >= MIN_SHARED_SEEDS:  # plain Python: these are 2-10 numbers, numpy's overhead dominates
            mean = sum(d) / len(d)
            testable.append(index)
            means.append(mean)
            spreads.append(math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1)))
            counts.append(len(d))
    p_values = np.full(len(others), np.nan)
    if not testable:
        return list(p_values), shared_counts
    means, counts = np.array(means), np.array(counts, dtype=float)
    if test == "paired t":
        spread = np.array(spreads)
        df = counts - 1
    else:
        valued = [seed for seed in seeds if any(seed in own for own in values.values())]
        variance, residual_df = pooled_variance(np.array([[own.get(seed, np.nan) for seed in valued]
                                                          for own in values.values()]))
        if residual_df < 1:
            return list(p_values), shared_counts
        spread = np.full(len(testable), np.sqrt(2 * variance))
        df = np.full(len(testable), float(residual_df))
    shifted = means + tolerance  # H0: mu_b - mu_c <= -tolerance (docs/racing.md)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = shifted / (spread / np.sqrt(counts))
    # No spread at all: a constant positive difference is as significant as it gets, none is no evidence.
    t = np.where(spread > 0, t, np.where(shifted > 0, np.inf, 0.0))
    p_values[testable] = stats.t.sf(t, df)
    return list(p_values), shared_counts
