"""A configuration's average over a suite of evaluation tasks, with a bootstrap confidence interval over seeds and
items (queries), and its rank interval among the configurations.

`SUITES` names the test metrics of each suite ("sts", "useb", "mteb"); an explicit list of metrics is a suite too.
A configuration uses the seeds that have a finished run with every task of the suite; one that cannot be ranked
is named with the reason, never averaged over fewer tasks or seeds. The interval is a paired percentile
bootstrap over seeds and, for tasks whose per-item outcomes are given (`items`) and average to the logged metric,
over items too; seeded (`random_seed`), so the same runs give the same intervals.

    runs = fetch_trial_runs("sqlite:///mlflow.db", "tsdae_deletion")   # sentsweep.analysis.runs
    print(to_markdown(suite_intervals(runs, ["noise_ratio"], "useb")))

The estimate, the two-level bootstrap, the draw order and the rank interval: docs/analysis.md, "Suite averages and
their intervals"."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentsweep.analysis.runs import per_query_outcomes
from sentsweep.analysis.tables import (
    ITEM_MEAN_TOLERANCE,
    as_number_if_possible,
    per_query_name,
    sort_key,
    status_counts,
)
from sentsweep.errors import InputError
from sentsweep.registry import unknown_name

# The test metrics of each suite, as the tasks log them (`sentsweep.tasks.main_metric(task)`), in table order.
SUITES: dict[str, tuple[str, ...]] = {
    "sts": ("sts12_wmean_spearman", "sts13_wmean_spearman", "sts14_wmean_spearman", "sts15_wmean_spearman",
            "sts16_wmean_spearman", "stsb_spearman", "sickr_spearman"),
    "useb": ("askubuntu_map", "cqadupstack_map_at_100", "twitterpara_ap", "scidocs_map"),
}
MTEB_SUITE = "mteb"  # its metrics are those of the runs: see suite_metrics
ITEM_SCALE = 100.0  # metrics are x 100, per-query outcomes are not
DEFAULT_RESAMPLES = 2000
MIN_SEEDS_FOR_INTERVAL = 2  # one seed shows no seed-to-seed variation: its interval would be falsely narrow
_BLOCK = 4_000_000  # replicates x items drawn at once


@dataclass(frozen=True)
class SuiteRow:
    """One configuration's suite average, interval and ranks (nan / 0 for an unranked configuration)."""

    config: tuple
    mean: float  # mean over tasks of the task's mean over `seeds`
    ci_low: float  # nan with fewer than MIN_SEEDS_FOR_INTERVAL seeds
    ci_high: float
    rank: int  # by the point estimates, 1 = best
    rank_low: int
    rank_high: int
    seeds: tuple  # the seeds used: those with every task
    task_means: dict  # metric -> mean over `seeds`
    note: str = ""  # seeds left out, or why the configuration is not ranked

    @property
    def n_seeds(self) -> int:
        return len(self.seeds)

    @property
    def ranked(self) -> bool:
        return self.rank > 0


@dataclass
class SuiteResult:
    row_params: list[str]
    suite: str  # the suite's name, or "custom"
    metrics: list[str]  # the suite's tasks (metrics)
    rows: list[SuiteRow]  # ranked configurations by observed rank, then the unranked ones
    item_tasks: list[str]  # the tasks whose items were resampled too
    excluded: dict  # run status -> count of runs left out (failed, stopped early, unfinished)
    resamples: int
    confidence: float
    higher_is_better: bool
    random_seed: int
    notes: list[str] = field(default_factory=list)  # item outcomes supplied but not used, and why
    replicates: np.ndarray | None = None  # (resamples, ranked configurations): suite averages, in `ranked` order
    ranks: np.ndarray | None = None  # the same shape: the ranks in each replicate

    @property
    def seed_only_tasks(self) -> list[str]:
        return [metric for metric in self.metrics if metric not in self.item_tasks]

    @property
    def ranked(self) -> list[SuiteRow]:
        return [row for row in self.rows if row.ranked]

    def row(self, config) -> SuiteRow:
        """The row of `config` (a tuple of row values, or one value for one row param; "0.1" matches 0.1)."""
        key = _config_key(config)
        for row in self.rows:
            if _config_key(row.config) == key:
                return row
        raise KeyError(config)


def suite_metrics(suite: str | Sequence[str], runs: pd.DataFrame | None = None) -> list[str]:
    """The metrics of the suite named `suite` (see SUITES; "mteb": the MTEB main scores among `runs`' metrics, none
    without runs), or `suite` itself as a list of metric names; an unknown name or an empty list is an `InputError`."""
    if suite == MTEB_SUITE:
        metrics = sorted(column.removeprefix("metrics.") for column in ([] if runs is None else runs.columns)
                         if column.startswith("metrics.mteb_") and column.endswith("_main_score"))
        if runs is not None and not metrics:
            raise InputError("suite 'mteb': the runs have no MTEB task's main score (mteb_<Task>_main_score)")
        return metrics
    if isinstance(suite, str):
        if suite not in SUITES:
            raise unknown_name("suite", suite, SUITES)
        return list(SUITES[suite])
    metrics = list(dict.fromkeys(suite))
    if not metrics:
        raise InputError("a suite needs at least one metric")
    return metrics


def _norm(value):
    """A row value or seed as a comparable key: a number where it reads as one ("0.10" == 0.1 == "0.1")."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _seed_order(seed):
    return sort_key(_norm(seed))


def _config_key(config) -> tuple:
    return tuple(_norm(v) for v in config) if isinstance(config, tuple) else (_norm(config),)


def _label(row_params: list[str], config: tuple) -> str:
    return ", ".join(f"{name}={value}" for name, value in zip(row_params, config))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _collect(runs: pd.DataFrame, row_params: list[str], metrics: list[str]) -> dict:
    """{config: {metric: {seed: value}}} of the finished runs with a value (a later run of the same seed wins, as in
    the comparison tables)."""
    finished = runs[runs["status"] == "FINISHED"]
    keys = pd.DataFrame({p: as_number_if_possible(finished[f"params.{p}"]) for p in row_params}, index=finished.index)
    collected: dict = {}
    for row_key, group in keys.groupby(row_params, sort=True):
        config = row_key if isinstance(row_key, tuple) else (row_key,)
        subset = finished.loc[group.index]
        collected[config] = {
            metric: {str(seed): float(value) for seed, value in zip(subset["seed"], subset[f"metrics.{metric}"])
                     if not pd.isna(value)}
            for metric in metrics
        }
    return collected


def _item_vectors(items: Mapping, row_params: list[str], configs: list[tuple], seeds_of: dict, metric: str):
    """The item outcomes of `metric` for every (config, used seed): (vectors, problem). `vectors` is {(config,
    seed): array} when all are there, else None with `problem` saying what is missing ("" when none are)."""
    per_query = per_query_name(metric)
    index = {_config_key(config): {_norm(seed): outcomes for seed, outcomes in by_seed.items()}
             for config, by_seed in items.items()}
    found, missing = {}, []
    for config in configs:
        by_seed = index.get(_config_key(config), {})
        for seed in seeds_of[config]:
            outcomes = by_seed.get(_norm(seed), {})
            vector = outcomes.get(metric, outcomes.get(per_query) if per_query else None)
            if vector is None:
                missing.append((config, seed))
            else:
                found[(config, seed)] = np.asarray(vector, dtype=float)
    if not found:
        return None, ""
    lengths = {len(vector) for vector in found.values()}
    if len(lengths) > 1:
        raise InputError(f"item outcomes of {metric!r} differ in length ({', '.join(map(str, sorted(lengths)))} "
                         f"items): not the same task data?")
    if lengths == {0}:
        return None, f"{metric}: the item outcomes are empty; resampled over seeds only"
    if missing:
        shown = "; ".join(f"{_label(row_params, config)} seed {seed}" for config, seed in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        return None, (f"{metric}: item outcomes missing for {shown}{more}; resampled over seeds only (items must be "
                      f"resampled for every configuration and seed alike)")
    return found, ""


def _counts(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each of 0..size-1 occurs in each row of `draws`, as float (rows, size)."""
    rows = draws.shape[0]
    offsets = draws + size * np.arange(rows)[:, None]
    return np.bincount(offsets.ravel(), minlength=rows * size).reshape(rows, size).astype(float)


def bootstrap_suite(values: np.ndarray, used: np.ndarray, items: Mapping | None = None, *,
                    resamples: int = DEFAULT_RESAMPLES, rng: np.random.Generator | None = None,
                    item_scale: float = ITEM_SCALE) -> np.ndarray:
    """Bootstrap replicates of the suite average (docs/analysis.md), shape (resamples, configurations).

    `values[c, t, s]`: configuration c's score on task t with seed s (any value where not `used[c, s]`);
    `used[c, s]`: whether configuration c has seed s (every configuration needs one); `items`: {t: array (C, S, n)}
    of per-item outcomes for the item-resampled tasks (any value where not used).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    values, used = np.asarray(values, dtype=float), np.asarray(used, dtype=bool)
    configs, tasks, seeds = values.shape
    if not used.any(axis=1).all():
        raise ValueError("every configuration needs at least one seed")
    draws = rng.integers(0, seeds, size=(resamples, seeds))
    while True:  # redraw replicates that miss all of some configuration's seeds (only when seed sets differ)
        empty = ((_counts(draws, seeds) @ used.T) == 0).any(axis=1)
        if not empty.any():
            break
        draws[empty] = rng.integers(0, seeds, size=(int(empty.sum()), seeds))
    weights = _counts(draws, seeds)[:, None, :] * used[None]  # (B, C, S): how often each own seed was drawn
    totals = weights.sum(axis=2)  # (B, C)
    scores = np.where(used[:, None, :], values, 0.0)
    task_means = np.einsum("bcs,cts->bct", weights, scores) / totals[:, :, None]
    for task, outcomes in sorted((items or {}).items()):
        outcomes = np.where(used[:, :, None], np.asarray(outcomes, dtype=float), 0.0)
        n = outcomes.shape[2]
        flat = outcomes.reshape(configs * seeds, n).T  # (n, C x S)
        drawn_means = np.empty((resamples, configs, seeds))
        block = max(1, _BLOCK // n)
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            chosen = _counts(rng.integers(0, n, size=(stop - start, n)), n)  # (b, n)
            drawn_means[start:stop] = (chosen @ flat).reshape(stop - start, configs, seeds) / n
        drawn_scores = scores[None, :, task, :] + item_scale * (drawn_means - outcomes.mean(axis=2)[None])
        task_means[:, :, task] = (weights * drawn_scores).sum(axis=2) / totals
    return task_means.mean(axis=2)


def rank_replicates(replicates: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Each row's ranks (1 = best; ties share the better rank) of the configurations in the columns."""
    signed = np.asarray(replicates, dtype=float) * (1.0 if higher_is_better else -1.0)
    return 1 + (signed[:, None, :] > signed[:, :, None]).sum(axis=2)


def _check_suite_inputs(runs: pd.DataFrame, row_params: list[str], suite: str | Sequence[str], metrics: list[str],
                        confidence: float, resamples: int) -> None:
    """An `InputError` naming what `suite_intervals` cannot work with: the confidence, the resamples, no runs, a
    param or metric the runs lack."""
    if not 0 < confidence < 1:
        raise InputError(f"confidence {confidence} is not between 0 and 1")
    if resamples < 1:
        raise InputError(f"resamples must be at least 1, got {resamples}")
    if runs.empty:
        raise InputError("no runs to summarise")
    missing_params = [p for p in row_params if f"params.{p}" not in runs]
    if missing_params:
        raise InputError(f"runs have no param named {', '.join(map(repr, missing_params))}")
    missing = [m for m in metrics if f"metrics.{m}" not in runs]
    if missing:
        suite_name = f"suite {suite!r}" if isinstance(suite, str) else "the suite"
        raise InputError(f"runs have no metric named {', '.join(map(repr, missing))} ({suite_name} needs "
                         f"{', '.join(metrics)})")


def _rankable_configs(collected: dict, metrics: list[str]) -> tuple[list, dict, dict, dict]:
    """(configurations ranked, {config: seeds with every task}, {config: note on seeds left out},
    {config: why it is not ranked}) of `collected` ({config: {metric: {seed: value}}})."""
    configs, seeds_of, notes_of, unranked = [], {}, {}, {}
    for config, by_metric in collected.items():
        absent = [m for m in metrics if not by_metric[m]]
        if absent:
            unranked[config] = f"not ranked: no finished run with {', '.join(absent)}"
            continue
        complete = set.intersection(*(set(by_metric[m]) for m in metrics))
        if not complete:
            unranked[config] = "not ranked: no seed has every task"
            continue
        configs.append(config)
        seeds_of[config] = sorted(complete, key=_seed_order)
        dropped = sorted(set().union(*(set(by_metric[m]) for m in metrics)) - complete, key=_seed_order)
        if dropped:
            reasons = [f"seed {seed} (no {', '.join(m for m in metrics if seed not in by_metric[m])})"
                       for seed in dropped]
            notes_of[config] = "left out: " + "; ".join(reasons)
    return configs, seeds_of, notes_of, unranked


def _item_arrays(items: Mapping | None, row_params: list[str], metrics: list[str], configs: list, seeds_of: dict,
                 seeds: list, values: np.ndarray, used: np.ndarray, item_scale: float) -> tuple[dict, list, list]:
    """({task index: per-item outcomes (configs x seeds x items)}, tasks resampled over items, notes on those
    resampled over seeds only): a task's items are used where `item_scale` x their mean is its metric."""
    position = {seed: i for i, seed in enumerate(seeds)}
    item_arrays, item_tasks, notes = {}, [], []
    for t, metric in enumerate(metrics if items else []):
        vectors, problem = _item_vectors(items, row_params, configs, seeds_of, metric)
        if vectors is not None:
            array = np.zeros((len(configs), len(seeds), len(next(iter(vectors.values())))))
            for (config, seed), vector in vectors.items():
                array[configs.index(config), position[seed]] = vector
            means = item_scale * array.mean(axis=2)
            off = [(c, s) for c, s in zip(*np.nonzero(used))
                   if not np.isclose(means[c, s], values[c, t, s], rtol=1e-9, atol=ITEM_MEAN_TOLERANCE)]
            if off:
                c, s = off[0]
                problem = (f"{metric}: {item_scale:g} x the mean of its {array.shape[2]} item outcomes is not the "
                           f"metric ({_label(row_params, configs[c])} seed {seeds[s]}: {means[c, s]:.4f} vs "
                           f"{values[c, t, s]:.4f}; {_plural(len(off), 'run')} so), as for a metric averaged over "
                           f"sub-collections of unequal size; resampled over seeds only")
            else:
                item_arrays[t] = array
                item_tasks.append(metric)
        if problem:
            notes.append(problem)
    return item_arrays, item_tasks, notes


def suite_intervals(runs: pd.DataFrame, row_params: list[str], suite: str | Sequence[str],
                    items: Mapping | None = None, *, higher_is_better: bool = True, confidence: float = 0.95,
                    resamples: int = DEFAULT_RESAMPLES, random_seed: int = 0,
                    item_scale: float = ITEM_SCALE) -> SuiteResult:
    """Each configuration's suite average with its bootstrap interval and rank interval (docs/analysis.md).

    `runs`: trial runs as `sentsweep.analysis.runs.fetch_trial_runs` returns them (finished runs only are used);
    `suite`: a name of SUITES or a list of metrics; `items`: optional per-item outcomes {config: {seed: {metric
    or per-query name: [outcome per item]}}}, config a tuple of row values (or one value for one row param), e.g.
    from `fetch_item_outcomes`. An unknown suite, or a param or metric the runs lack, is an `InputError` naming it.
    """
    metrics = suite_metrics(suite, runs)
    _check_suite_inputs(runs, row_params, suite, metrics, confidence, resamples)

    collected = _collect(runs, row_params, metrics)
    configs, seeds_of, notes_of, unranked = _rankable_configs(collected, metrics)

    seeds = sorted({seed for config in configs for seed in seeds_of[config]}, key=_seed_order)
    position = {seed: i for i, seed in enumerate(seeds)}
    values = np.zeros((len(configs), len(metrics), len(seeds)))
    used = np.zeros((len(configs), len(seeds)), dtype=bool)
    for c, config in enumerate(configs):
        for seed in seeds_of[config]:
            used[c, position[seed]] = True
            for t, metric in enumerate(metrics):
                values[c, t, position[seed]] = collected[config][metric][seed]

    item_arrays, item_tasks, notes = _item_arrays(items, row_params, metrics, configs, seeds_of, seeds, values,
                                                  used, item_scale)

    rows: list[SuiteRow] = []
    replicates = ranks = None
    if configs:
        point = np.array([values[c][:, used[c]].mean(axis=1).mean() for c in range(len(configs))])
        replicates = bootstrap_suite(values, used, item_arrays, resamples=resamples,
                                     rng=np.random.default_rng(random_seed), item_scale=item_scale)
        ranks = rank_replicates(replicates, higher_is_better)
        observed = rank_replicates(point[None], higher_is_better)[0]
        tail = (1 - confidence) / 2
        for c, config in enumerate(configs):
            low, high = np.quantile(replicates[:, c], [tail, 1 - tail])
            if len(seeds_of[config]) < MIN_SEEDS_FOR_INTERVAL:
                low = high = math.nan
                notes_of[config] = "; ".join(filter(None, [notes_of.get(config), "one seed: no interval"]))
            rank_low, rank_high = np.quantile(ranks[:, c], [tail, 1 - tail], method="inverted_cdf")
            task_means = {m: float(values[c, t, used[c]].mean()) for t, m in enumerate(metrics)}
            rows.append(SuiteRow(config, float(point[c]), float(low), float(high), int(observed[c]), int(rank_low),
                                 int(rank_high), tuple(seeds_of[config]), task_means, notes_of.get(config, "")))
        order = sorted(range(len(configs)), key=lambda c: (observed[c], tuple(map(sort_key, configs[c]))))
        rows = [rows[c] for c in order]
        replicates, ranks = replicates[:, order], ranks[:, order]
    for config, reason in unranked.items():
        by_metric = collected[config]
        rows.append(SuiteRow(config, math.nan, math.nan, math.nan, 0, 0, 0, (),
                             {m: float(np.mean(list(by_metric[m].values()))) for m in metrics if by_metric[m]},
                             reason))
    return SuiteResult(list(row_params), suite if isinstance(suite, str) else "custom", metrics, rows, item_tasks,
                       status_counts(runs), resamples, confidence, higher_is_better, random_seed, notes,
                       replicates, ranks)


def _tasks_text(result: SuiteResult, row: SuiteRow) -> str:
    """"7/7", or for an unranked configuration how many of the suite's tasks it has a value for."""
    return f"{len(row.task_means)}/{len(result.metrics)}"


def to_markdown(result: SuiteResult, digits: int = 2) -> str:
    """The suite table: row params, suite average, CI, observed rank, rank interval, seeds, tasks; a footnote."""
    level = f"{100 * result.confidence:g}%"
    header = result.row_params + ["suite avg", f"{level} CI", "rank", f"rank {level} interval", "n seeds", "tasks"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in result.rows:
        if row.ranked:
            interval = "n/a" if math.isnan(row.ci_low) else f"[{row.ci_low:.{digits}f}, {row.ci_high:.{digits}f}]"
            cells = [f"{row.mean:.{digits}f}", interval, str(row.rank), f"[{row.rank_low}, {row.rank_high}]"]
        else:
            cells = ["–", "–", "–", "–"]
        cells += [str(row.n_seeds), _tasks_text(result, row)]
        lines.append("| " + " | ".join([str(v) for v in row.config] + cells) + " |")
    return "\n".join(lines) + "\n\n" + footnote(result)


def footnote(result: SuiteResult) -> str:
    """What the table's numbers are: the suite, the bootstrap, the item-resampled tasks, the runs left out."""
    level = f"{100 * result.confidence:g}%"
    name = f"suite {result.suite!r}" if result.suite != "custom" else "the suite"
    items = ", ".join(result.item_tasks) or "none"
    excluded = ", ".join(f"{count} {status}" for status, count in sorted(result.excluded.items())) or "none"
    better = "higher" if result.higher_is_better else "lower"
    parts = [
        f"Suite avg: mean over the {len(result.metrics)} tasks of {name} ({', '.join(result.metrics)}) of each "
        f"task's mean over the seeds that have every task (n seeds). {level} CI: percentile bootstrap, "
        f"{result.resamples} resamples (seed {result.random_seed}), seeds resampled jointly for every task and "
        f"configuration (paired); items also resampled for: {items}; seeds only for: "
        f"{', '.join(result.seed_only_tasks) or 'none'}. Rank: 1 = best ({better} is better), by the suite avg; "
        f"rank interval: the {level} interval of the configuration's rank over the resamples. "
        f"Runs left out: {excluded}.",
    ]
    row_notes = [f"{_label(result.row_params, row.config)}: {row.note}" for row in result.rows if row.note]
    if row_notes:
        parts.append("Notes: " + " ".join(f"{note}." for note in row_notes))
    if result.notes:
        parts.append("Item outcomes: " + " ".join(f"{note}." for note in result.notes))
    return "\n\n".join(parts)


def to_frame(result: SuiteResult) -> pd.DataFrame:
    """One line per configuration: row params, suite average, CI, ranks, seeds (';'-separated), each task's mean
    over the seeds used, note."""
    records = []
    for row in result.rows:
        records.append(dict(zip(result.row_params, row.config)) | {
            "suite_mean": row.mean, "ci_low": row.ci_low, "ci_high": row.ci_high,
            "rank": row.rank if row.ranked else None, "rank_low": row.rank_low if row.ranked else None,
            "rank_high": row.rank_high if row.ranked else None, "n_seeds": row.n_seeds,
            "seeds": ";".join(map(str, row.seeds)),
        } | {f"mean.{metric}": row.task_means.get(metric, math.nan) for metric in result.metrics} | {"note": row.note})
    return pd.DataFrame.from_records(records)


def fetch_item_outcomes(tracking_uri: str, runs: pd.DataFrame, row_params: list[str], metrics: list[str]) -> dict:
    """{config: {seed: {per-query name: [outcome per query]}}} from the finished runs' per-query artifacts, for the
    metrics of `metrics` that have per-query outcomes (tables.per_query_name); runs without the artifact are skipped
    (their tasks are then resampled over seeds only, and the result says so)."""
    wanted = {per_query_name(m) for m in metrics} - {None}
    if not wanted or runs.empty:
        return {}
    finished = runs[runs["status"] == "FINISHED"]
    keys = pd.DataFrame({p: as_number_if_possible(finished[f"params.{p}"]) for p in row_params}, index=finished.index)
    outcomes: dict = {}
    for index, run_id in finished["run_id"].items():
        try:
            stored = per_query_outcomes(tracking_uri, run_id)
        except InputError:
            continue
        kept = {name: values for name, values in stored.items() if name in wanted}
        if kept:
            config = tuple(keys.loc[index, p] for p in row_params)
            outcomes.setdefault(config, {})[str(finished.loc[index, "seed"])] = kept
    return outcomes
