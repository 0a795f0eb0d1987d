"""Racing over seeds without round barriers: a configuration gets its next seed as soon as a slot is free.

`AsyncRace` hands out one trial at a time (`next_trial`, for a free slot; None while nothing may start) and decides
whenever a level of seeds closes (level n: every configuration alive has a result on `seeds[:n]`), from those
results only, so its eliminations do not depend on arrival order or slots. Its test (Tukey's studentized range by
default, `test="paired t"`, or the round race's with `family="level"`) holds the error over the WHOLE race: when all
configurations are equal, the chance that any is dropped is at most `alpha`. Free slots run seeds ahead; the
driver stops the trials the race no longer needs (`unneeded`). Like `Race`, a pure, deterministic, picklable state
machine.

    >>> race = AsyncRace(["a", "b", "c"], seeds=[0, 1, 2, 3, 4])
    >>> scores = {"a": 80.0, "b": 70.0, "c": 79.5}
    >>> while (trial := race.next_trial()) is not None:
    ...     race.record(*trial, scores[trial[0]] + 0.1 * trial[1] * (-1) ** trial[1])
    >>> race.finished, race.best, race.eliminated
    (True, 'a', ['b', 'c'])

Levels, the test, why it bounds the error, run-ahead and the end: docs/racing.md, "The asynchronous race"."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from sentsweep.analysis.racing import ELIMINATED, MIN_SHARED_SEEDS, RACE_ALPHA, RaceBook, pooled_variance
from sentsweep.analysis.significance import P_LABELS, adjust_p_values

# What an elimination's error is controlled over: the whole race (Tukey's range, alpha split over the levels; the
# default) or each level separately (Race's test at each level: its eliminations, without its barrier).
FAMILIES = ("race", "level")


# Gauss-Legendre nodes and weights on [-1, 1] for the two integrals of the studentized range's distribution.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(128)
_Z_BOUND = 8.5  # the inner integral over z ~ N(0, 1), cut at +-8.5 (a tail of 1e-17)


def studentized_range_cdf(q: float, k: int, df: int) -> float:
    """P(Q <= q) for the studentized range Q of k independent N(0, 1) means over an independent s with
    df * s^2 ~ chi^2_df: the double integral

        P(Q <= q) = int_0^inf f_s(s) k int phi(z) [Phi(z) - Phi(z - q s)]^(k - 1) dz ds

    (Hsu 1996; scipy.stats.studentized_range integrates the same), by 128-point Gauss-Legendre rules, over z
    in [-8.5, 8.5] and over log s between s's 1e-14 and 1 - 1e-14 quantiles. It agrees with scipy's adaptive
    quadrature to 1e-10 (tests/analysis/test_async_race.py) at ~1 ms instead of ~15 ms a value (~0.2 s a quantile),
    which
    is what lets 1,000 simulated races run in seconds."""
    if q <= 0:
        return 0.0
    if np.isinf(q):
        return 1.0
    z, z_weights = _Z_BOUND * _NODES, _Z_BOUND * _WEIGHTS
    low, high = np.log(np.sqrt(stats.chi2.ppf([1e-14, 1 - 1e-14], df) / df))
    log_s = (low + high) / 2 + (high - low) / 2 * _NODES
    s = np.exp(log_s)
    log_density = ((df / 2) * np.log(df) + (df - 1) * log_s - df * s ** 2 / 2 - special.gammaln(df / 2)
                   - (df / 2 - 1) * np.log(2))
    inside = np.clip(special.ndtr(z[:, None]) - special.ndtr(z[:, None] - q * s[None, :]), 0.0, 1.0) ** (k - 1)
    inner = k * (stats.norm.pdf(z) * z_weights) @ inside
    return float(np.sum((high - low) / 2 * _WEIGHTS * np.exp(log_density + log_s) * inner))


@lru_cache(maxsize=None)
def tukey_critical(alpha: float, k: int, df: int) -> float:
    """q(1 - alpha; k, df): the studentized range's upper alpha quantile (a race asks for few distinct ones)."""
    high = 10.0
    while studentized_range_cdf(high, k, df) < 1 - alpha:
        high *= 2
    return float(optimize.brentq(lambda q: studentized_range_cdf(q, k, df) - (1 - alpha), 0.0, high, xtol=1e-10))


class AsyncRace(RaceBook):
    """A race of `configs` over `seeds` without round barriers (docs/racing.md): the same arguments as
    racing.Race, and `family` ("race": Tukey's range at alpha over the levels, the guarantee over the whole race;
    "level": Race's test at each level, Race's eliminations without its barrier). Use: `trial =
    race.next_trial()` whenever a slot is free (None: nothing may start now, or the race is finished),
    `race.record(config, seed, value)` whenever a result arrives, until `race.finished`."""

    def __init__(self, configs, seeds: list[int], initial_seeds: int = 2, alpha: float = RACE_ALPHA,
                 family: str = "race", **settings):
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}: expected one of {', '.join(FAMILIES)}")
        super().__init__(configs, seeds, initial_seeds=initial_seeds, alpha=alpha, **settings)
        self.family = family
        self.levels = max(1, len(self.seeds) - max(initial_seeds, MIN_SHARED_SEEDS) + 1)
        self.tests = self.levels  # the tests alpha is split over (a race over steps adds its rungs)
        self.level_alpha = alpha / self.tests
        self._level = initial_seeds  # the lowest open level: its decisions use seeds[:_level]
        self._handed = dict.fromkeys(self.configs, 0)  # seeds handed out to each configuration: seeds[:count]
        self._tukey: dict = {}  # config -> (statistic, k, df) of its last Tukey comparison (status's p-value)
        self._decided_at: dict = {}  # config -> the level that dropped it or ended the race (counted_seeds)
        self._order = {config: index for index, config in enumerate(self.configs)}

    @property
    def open_level(self) -> int:
        """The lowest level not closed yet: its decisions will use the results on seeds[:open_level]."""
        return self._level

    def next_trial(self) -> tuple | None:
        """One (config, seed) for a free slot: the lowest open level's trials not handed out yet (seed by seed,
        in the configurations' order), else the next seed of a configuration alive, the fewest seeds handed out
        first, best current mean among those (without a budget); None when nothing may start now (results to wait
        for), the budget is spent, or the race is finished. Each trial is handed out once."""
        if self._finished or (self.max_trials is not None and self._trials >= self.max_trials):
            return None
        alive = self._alive()
        behind = [config for config in alive if self._handed[config] < self._level]
        if behind:
            config = min(behind, key=self._handed.__getitem__)  # min keeps the configurations' order on ties
        elif self.max_trials is None and len(alive) > 1 and self._may_run_ahead():
            # (no run-ahead on a budget, docs/racing.md; nor for a lone configuration: the level's close ends it)
            ahead = [config for config in alive if self._handed[config] < len(self.seeds)]
            if not ahead:
                return None
            config = max(ahead, key=self._run_ahead_rank)
        else:
            return None
        trial = (config, self.seeds[self._handed[config]])
        self._handed[config] += 1
        if self._why[config] == "not started":
            self._why[config] = "running"
        self._hand_out([trial])
        return trial

    def record(self, config, seed, value) -> None:
        """The result of trial (config, seed): a number, or None (or NaN) for a failed trial. Closes every level
        it completes (eliminations, then the end or the next level). After the end, a result is still accepted
        (a trial that was running when the race finished) and changes no decision."""
        self._take(config, seed, value)
        if self._finished:
            return
        self._before_levels(config, seed, value)
        while not self._finished and self._level_complete():
            self._close_level()
        if (not self._finished and self.max_trials is not None and self._trials >= self.max_trials
                and not self._outstanding):
            self._end_on_leader_budget()

    # --- a level's decisions -------------------------------------------------------------------------------

    def _may_run_ahead(self) -> bool:
        """Whether a free slot may go to a seed run ahead now (a race over steps keeps it for a paused trial)."""
        return True

    def _before_levels(self, config, seed, value) -> None:
        """What a race does with a result before its levels are closed (a race over steps: its rungs)."""

    def _run_ahead_rank(self, config) -> tuple:
        """The shallowest run-ahead first (fewest seeds handed out), then the best current mean (max),
        configurations without a value last, earlier configurations first."""
        scored = bool(self._values[config])
        return -self._handed[config], scored, self._sign * self._mean(config) if scored else 0.0, -self._order[config]

    def _level_complete(self) -> bool:
        """Every configuration alive has a result on each of seeds[:level] (seeds run ahead beyond it are not
        counted)."""
        level_seeds = self.seeds[:self._level]
        return all(seed in self._values[config] or seed in self._failed[config]
                   for config in self._alive() for seed in level_seeds)

    def _close_level(self) -> None:
        n, level_seeds = self._level, self.seeds[:self._level]
        for config in self._alive():
            if not any(seed in self._values[config] for seed in level_seeds):
                self._eliminate(config, f"every trial failed ({n} seeds)")
        alive = self._alive()
        if not alive:
            self._finished = True
            return
        table = np.array([[self._values[config].get(seed, np.nan) for seed in level_seeds] for config in alive])
        leader = alive[int(np.argmax(self._sign * np.nanmean(table, axis=1)))]  # never dropped, as in Race
        if len(alive) > 1 and self.family == "level":
            self._test_against_leader(alive, level_seeds)
        elif len(alive) > 1:
            self._test(alive, table, leader)
        kept = [config for config in alive if self._state[config] != ELIMINATED]
        self._why[leader], self._p[leader] = f"leading after {n} seeds", float("nan")
        self._tukey.pop(leader, None)
        if len(kept) == 1 or n == len(self.seeds):
            self._decided_at.update(dict.fromkeys(kept, n))
        if len(kept) == 1:
            self._end(leader, f"the only config left after {n} seeds" if len(self.configs) > 1 else "the only config",
                      "")
        elif n == len(self.seeds):
            self._end(leader, f"best mean of the {len(kept)} configs left at the maximum of {n} seeds",
                      f"tied with the best at the maximum of {n} seeds")
        else:
            self._level += 1

    def _test(self, alive: list, table: np.ndarray, leader, where: str = "") -> None:
        """The level's comparisons on `table` (the configurations alive x seeds[:level], NaN: failed; module
        docstring): eliminates each configuration found worse than some other, except the leader (with a
        tolerance, near-ties could otherwise drop each other), says why the others stay. `where`: after the
        seeds in the reasons (a race over steps: the rung)."""
        present = ~np.isnan(table)
        weights = present.astype(float)
        # Centred per seed (no difference changes) so that the sums of squares do not cancel large values.
        counts = weights.sum(axis=0)
        column_means = np.divide(np.where(present, table, 0.0).sum(axis=0), counts, out=np.zeros(len(counts)),
                                 where=counts > 0)
        y = np.where(present, self._sign * (table - column_means), 0.0)
        shared = weights @ weights.T  # [b, c]: the seeds both have
        testable = (shared >= MIN_SHARED_SEEDS) & ~np.eye(len(alive), dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = (y @ weights.T - weights @ y.T) / shared + self.tolerance  # [b, c]: mean of x_b - x_c + delta
        if self.test == "pooled t":
            verdicts = self._tukey_verdicts(alive, table, shifted, shared, testable)
        else:
            verdicts = self._paired_verdicts(alive, y, weights, shifted, shared, testable)
        for column, config in enumerate(alive):
            if column not in verdicts:
                self._p[config] = float("nan")
                self._tukey.pop(config, None)
                self._why[config] = (f"not tested after {self._level} seeds{where}: no other config shares "
                                     f"{MIN_SHARED_SEEDS} seeds with it, or no residual degrees of freedom")
                continue
            row, dropped, verdict = verdicts[column]
            seeds = int(shared[row, column])
            if dropped and config != leader:
                self._eliminate(config, f"{self._worse} {alive[row]} after {seeds} seeds{where} ({verdict})")
            else:
                self._why[config] = f"not {self._worse} {alive[row]} after {seeds} seeds{where} ({verdict})"

    def _tukey_verdicts(self, alive: list, table, shifted, shared, testable) -> dict:
        """{column: (row of its strongest comparison, dropped, the verdict in words)}: Tukey(-Kramer)."""
        variance, df = pooled_variance(table)
        if df < 1:
            return {}
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.where(variance > 0, shifted / np.sqrt(variance / shared), np.where(shifted > 0, np.inf, 0.0))
        critical = tukey_critical(self.level_alpha, len(alive), df)
        strongest = np.where(testable, statistic, -np.inf)  # [b, c]; for each c its largest over the others b
        rows = strongest.argmax(axis=0)
        verdicts = {}
        for column in np.flatnonzero(testable.any(axis=0)):
            value = float(strongest[rows[column], column])
            self._tukey[alive[column]] = (value, len(alive), df)
            verdicts[column] = (rows[column], value > critical, f"Tukey's range statistic {value:.3g} "
                                f"{'>' if value > critical else '<='} q = {critical:.3g} at {self._split}, "
                                f"{len(alive)} configs, {df} df")
        return verdicts

    def _paired_verdicts(self, alive: list, y, weights, shifted, shared, testable) -> dict:
        """{column: (row of its strongest comparison, dropped, the verdict in words)}: paired t per ordered pair,
        adjusted together."""
        squares = y ** 2
        sum_squares = squares @ weights.T + weights @ squares.T - 2 * y @ y.T  # [b, c]: sum of (x_b - x_c)^2
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = shifted - self.tolerance
            spread = np.sqrt(np.maximum(sum_squares - shared * mean ** 2, 0.0) / (shared - 1))
            t = np.where(spread > 0, shifted / (spread / np.sqrt(shared)), np.where(shifted > 0, np.inf, 0.0))
        p = np.full(t.shape, np.nan)
        p[testable] = stats.t.sf(t[testable], shared[testable] - 1)
        adjusted = adjust_p_values(p.ravel(), self.correction).reshape(p.shape)
        label = f"{P_LABELS[self.correction]} x {self._tests_text}"
        strongest = np.where(testable, adjusted, np.inf)  # [b, c]; for each c its smallest over the others b
        rows = strongest.argmin(axis=0)
        verdicts = {}
        for column in np.flatnonzero(testable.any(axis=0)):
            value = min(1.0, self.tests * float(strongest[rows[column], column]))
            self._p[alive[column]] = value
            verdicts[column] = (rows[column], value < self.alpha,
                                f"{label} = {value:.2g}{f' < {self.alpha:g}' if value < self.alpha else ''}")
        return verdicts

    def _end_on_leader_budget(self) -> None:
        """The budget is spent and every result is in: the leader (best mean over its own seeds) is best."""
        leader = self._leader(self._alive())
        if leader is None:
            self._finished = True
            return
        self._end_on_budget(leader)

    def counted_seeds(self) -> dict:
        """{config: its seeds with a result, up to the level that decided it}: a configuration dropped at level n, or
        alive when level n ended the race, counts seeds[:n] and not a seed it ran ahead on, which ran or not as the
        results' order fell; so the counted results, and the table made of them, are a function of the table of
        scores alone (a race ended by its budget counts every result: where it stops depends on the order)."""
        counted = super().counted_seeds()
        return {config: [seed for seed in seeds
                         if self.seeds.index(seed) < self._decided_at.get(config, len(self.seeds))]
                for config, seeds in counted.items()}

    def _eliminate(self, config, why: str) -> None:
        super()._eliminate(config, why)
        self._decided_at[config] = self._level

    def _p_value(self, config) -> float:
        """The paired t's adjusted p; for Tukey's test L * P(Q_{k,df} >= its statistic), computed when asked
        rather than for every configuration at every level (the decision needs only the quantile)."""
        if config not in self._tukey:
            return self._p[config]
        value, k, df = self._tukey[config]
        return min(1.0, self.tests * (1.0 - studentized_range_cdf(value, k, df)))

    @property
    def _tests_text(self) -> str:
        """The tests alpha is split over, in words: "4 levels"."""
        return f"{self.levels} levels"

    @property
    def _split(self) -> str:
        """alpha and its split, in words: "0.2 / 4 levels"."""
        return f"{self.alpha:g} / {self._tests_text}"
