"""Racing over seeds without round barriers: a configuration gets its next seed as soon as a slot is free.

`Race` (sentsweep.analysis.racing) works in rounds: every configuration still racing runs the next seed, the round
waits for its slowest trial, then a test of each configuration against the leader drops the worse ones. On a
cluster the barrier idles every slot but the slowest trial's at the end of each round. `AsyncRace` hands out one
trial at a time (`next_trial`, for a free slot) and decides whenever results arrive; it keeps the same paired
seed ids (every configuration gets the seeds in the order of `seeds`) and it has the error control the round
race lacks: under the null (all configurations equal), the probability over a WHOLE race that any configuration
is dropped is at most alpha. The round race spends alpha on every round separately and compares the leader, the
largest of k observed means, with each other configuration: its chance of dropping some configuration when all
are equal is far above alpha (benchmarks/racing.py; tests/test_async_race.py shows it on the same simulation).
Both races stay: `Race` drops more (it saves more compute) and claims less; `AsyncRace` claims family-wise
error control and needs no barrier. Like `Race`, it is a pure, deterministic state machine (no Ray, no MLflow,
no randomness), picklable (a Ray Tune searcher that holds it is pickled with it).

Design
------
- Levels. Level n (n = initial_seeds .. len(seeds)) is the question "which configurations are worse, on the
  seeds seeds[:n]?". It closes when every configuration alive at that time has a result (a value or a failure)
  for each of seeds[:n]; that happens on the arrival of a result, and the decisions are made then, using ONLY
  the results on seeds[:n] of the configurations alive, never a seed beyond n that some configuration already
  ran ahead on. After level n the next level is n + 1 (it may close on the same arrival, when the run-ahead
  results are all in). So the eliminations, the level at which each happens and the reasons given are a
  deterministic function of the table of scores, whatever the order of arrival or the number of slots (the
  configurations alive at level n are those the earlier levels kept, which by induction depend only on the
  table). What does depend on the arrival order is which run-ahead trials ran (below); with a trial budget,
  where nothing runs ahead, not even that.
- The test at a level (`test="pooled t"`, the default): Tukey's simultaneous comparison of all pairs for a
  randomized complete block design, configurations as treatments and seeds as blocks (Tukey, J. W. (1953). The
  problem of multiple comparisons. Unpublished manuscript, Princeton University; presented, with the one-sided
  multiple comparisons with the best, in Hsu, J. C. (1996). Multiple Comparisons: Theory and Methods. Chapman &
  Hall). With k configurations alive, their means over seeds[:n], and s^2 the residual variance of the
  additive model x_cs = mu + config_c + seed_s + e_cs on those values with its df degrees of freedom
  ((k - 1)(n - 1) when complete; `racing.pooled_variance`, the estimate Race's pooled t uses), configuration c
  is dropped when

      max_b (mean_b - mean_c) + delta > q(1 - alpha_n; k, df) * s / sqrt(n),

  in the direction of "better", with delta the tolerance (the indifference zone of Race: c is dropped once the
  data say it cannot beat some b by delta or more; the leader, the best mean on seeds[:n], is never dropped, as
  in Race: with delta > 0 two near-ties could otherwise drop each other), q the studentized range's quantile
  (`studentized_range_cdf`, scipy.stats.studentized_range's integral on fixed rules, ~100 times faster) and
  alpha_n = alpha / L, L the number of levels at which a test can be made
  (n >= 2, so L = len(seeds) - max(initial_seeds, 2) + 1): a Bonferroni split of alpha over the levels,
  fixed before any data. Missing values (failed trials): each pair is compared over the seeds both have, m of
  them, with s / sqrt(m): the Tukey-Kramer form (Kramer, C. Y. (1956). Extension of multiple range tests to
  group means with unequal numbers of replications. Biometrics 12(3):307-310), whose conservativeness Hayter
  proved for the one-way layout (Hayter, A. J. (1984). A proof of the conjecture that the Tukey-Kramer
  multiple comparisons procedure is conservative. Annals of Statistics 12(1):61-75); a pair sharing fewer
  than 2 seeds is not compared. The p-value shown (ConfigStatus.p_adjusted) is L * P(Q_{k,df} >= the
  configuration's largest statistic), capped at 1, so that "dropped" reads "p < alpha" as in Race.
- Why that bounds the error over the whole race (the complete null: all true means equal, normal noise with
  one variance, no failures). Until the first elimination every configuration is alive, so at each level
  before it the statistic is exactly Tukey's studentized range of all k configurations on seeds[:n], and "some
  configuration is dropped at level n" is the event range > q(1 - alpha_n; k, df) * s / sqrt(n), of
  probability alpha_n (with delta = 0; a delta > 0 makes it larger, as it should: the tolerance accepts that
  error for near-ties). A race drops something only if for some level n the first elimination happens there,
  which is contained in that level's range event, so P(any elimination) <= sum_n alpha_n = alpha. The events of
  different levels are dependent (they share seeds), so the union bound is not reached: 15.6% of 1,000
  simulated races at alpha = 0.20 drop something (27 equal configurations, 5 seeds, 16 slots; the round race:
  94.2% of the same races; tests/test_async_race.py). What it does not cover: after a first (true) elimination, k is
  the number alive, so the true best among configurations that are not all equal is guarded by the range over
  the configurations left rather than over all of them; its rate of being dropped is measured, not bounded
  (benchmarks/racing.py: one configuration one noise sd better than 26 equal ones).
- `test="paired t"`: at a level, for every ordered pair (b, c) of configurations alive, the one-sided paired t
  of "b better than c" (by delta) over their shared seeds (m - 1 degrees of freedom), the p-values of all the
  k (k - 1) ordered pairs adjusted together (`correction`, Holm by default: Holm, S. (1979). A simple
  sequentially rejective multiple test procedure. Scandinavian Journal of Statistics 6(2):65-70), c dropped
  when some adjusted p of "b better than c" is < alpha_n. It assumes nothing about the variances; it has few
  degrees of freedom on few seeds. The same argument gives the bound: before the first elimination the family
  is every ordered pair of all k configurations, whose family-wise error the correction holds at alpha_n.
- `family="level"`: Race's test at each level instead (every configuration against the leader, `correction`
  over the level's comparisons at alpha, each level its own family). Its eliminations are Race's on the same
  table, round for level (tests/test_async_race.py), without the barrier and without the guarantee over the
  whole race: the option for a user who wants the round race's compute on a cluster's slots.
- Issuing order when a slot frees (`next_trial`): first the trials of the lowest open level not handed out
  yet, seed by seed and in the configurations' order (the first level is Race's first round); then, when all of
  those are out and results are still to come, run-ahead: the next seed of a configuration alive, the
  configuration with the fewest seeds handed out first (the shallowest run-ahead), best current mean among
  those, as deep as the seeds go, so that no slot idles while a configuration alive has a seed left. A seed run
  ahead is counted only once a level's decision keeps its configuration (`counted_seeds`); the driver stops
  the trials the race no longer needs (`unneeded`: those of a configuration just dropped, and every one once
  the race has finished), so what the speculation costs is the part of those trials run before the decision,
  not the trials. Without it, the slots would idle while the slowest trial of a level runs, which is the
  barrier again; with run-ahead of one level only, at most the configurations alive x 2 seeds could be out at
  once, and on 64 slots most would idle. With a trial budget there is no run-ahead: it
  would spend the budget on seeds before the decisions that could have saved them (on the TSDAE grid with
  --race-budget 67, all 67 went out before the first level closed).
- The end: one configuration left ("best"); the last level closed (the leader "best", the others "tied with
  best" at the maximum of the seeds); or the budget: `max_trials` stops the handing out once that many trials
  are out, and when their results are all in, the leader (best mean over its own seeds) is "best" and the
  others "tied with best" with "trial budget reached" as the reason. The states and their reasons read as
  Race's (racing.ConfigStatus, the same state names).
- What the guarantee costs (benchmarks/racing.py, the TSDAE grid of 27 configurations at the defaults, 500
  simulated sweeps, 16 slots, measured with a run-ahead of one level): the Tukey race ran 78% of
  the fixed 5-seed grid's trials where the round race runs 48% and family="level" 60%; it finds the best as
  often (99.6%, against 99.2%) and never dropped the true best (0.0%, against 23.8% of races for the round
  race). With 27 configurations the range's critical value is large (q(0.95; 27, 26) = 5.8 standard errors of
  a mean, where Holm's first step in the round race needs about 3.7), and the alpha split matters little
  (--race-alpha 0.05 to 0.25: 82% to 77%). benchmarks/racing.py prints the current figures, with the deep
  run-ahead and the stops, on 16 and 64 slots.
- Failed trials: as Race. `record(config, seed, None)` (or NaN) marks the seed missing, it is not retried,
  a comparison is over the seeds the two share; a configuration whose every trial on the level's seeds failed
  is eliminated when the level closes ("every trial failed"), before the test.
"""

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
    quadrature to 1e-10 (tests/test_async_race.py) at ~1 ms instead of ~15 ms a value (~0.2 s a quantile), which
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
    """A race of `configs` over `seeds` without round barriers (see the module docstring): the same arguments as
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
            # (no run-ahead on a budget, module docstring; nor for a lone configuration: the level's close ends it)
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
