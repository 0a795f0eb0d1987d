"""Searchers against each other on simulated TSDAE sweeps: regret against compute at the same budget, the seeds a
repeated axis (no model: minutes).

The space is the TSDAE paper's (TSDAE App. A) where its configurations differ least: the deletion ratio,
continuous in [0.1, 0.8], and the pooling (cls, mean). A configuration's true score is Table 6's curve over the
ratio (linear between its ratios) plus Table 7's difference of its pooling from CLS; the best, 78.84, is ratio 0.6
with mean pooling, and the true scores' sd over the space is `space_spread()`, 0.32. Every configuration runs on
`SEEDS_PER_CONFIGURATION` seeds: each seed's run is off its configuration's true score by an offset drawn once per
(configuration, seed) with sd `NOISE_SD`, 0.4 (TSDAE App. C, Table 9: the largest sd of TSDAE with BERT-base over 5
seeds), so the seeds disagree more than the configurations differ; each evaluation adds noise of a fifth of that.
A run's learning curve rises to its final score as `true - CURVE_RISE * (1 - fraction) ** 2` over its `RUNGS`
evaluations, so a multi-fidelity searcher sees at each rung the order the end will keep, up to the noise.

Compute is counted in whole trials (one seed trained to the end): a configuration on every seed costs
`SEEDS_PER_CONFIGURATION`, one stopped at rung k of `RUNGS` costs that times k / RUNGS. Every searcher gets
`BUDGET` trials. After each configuration it has ended, a searcher's answer is its best configuration by the mean
over its seeds among those trained to the end (the sweep table's best), and its regret is the true best's score
minus its answer's true score. Each of `--sweeps` sweeps draws its own offsets; every searcher is seeded by the
sweep's number.

The searchers and what each assumes:

- random search: Optuna's `RandomSampler`, nothing;
- TPE (mean only): the sweep's TPE (`sentsweep.sweep.search.optuna_sampler`), told each configuration's mean over
  its seeds: it treats a mean as exact;
- noise-gp: `--sampler noise-gp` (`sentsweep.sweep.search.noise_aware_sampler`), told the mean and its standard
  error: a smooth score over the space, each mean as noisy as its standard error says;
- Hyperband (random configurations): Optuna's `HyperbandPruner` (min 1, max `RUNGS` evaluations, reduction factor
  3) on random configurations, each judged at its rungs on the mean over its seeds: the early rungs rank
  configurations as the end does;
- TPE + HyperbandPruner: the same pruner with the TPE above (BOHB's idea: a model over the configurations, Hyperband
  over the budget): both assumptions;
- rung-gp: `sentsweep.sweep.search.rung_model_sampler`, the noise-aware GP fitted at the largest rung with 4
  configurations observed there, and configurations stopped at the step race's rungs (1 and 3 of 9 evaluations)
  only where the paired t over their seeds says the leader there is better: the order at a rung is the order at
  the end, and the seeds are shared across configurations.

Ray Tune's own multi-fidelity searchers are not run here: `TuneBOHB` needs hpbandster and ConfigSpace, which the lock
does not hold, and Ray's `HyperBandScheduler` runs only inside a Ray Tune run, several seconds each, too long for
hundreds of simulated sweeps; it is the same algorithm (Li et al. 2018) as the Hyperband row, whose brackets are
Optuna's.

The goal (docs/performance.md): at equal compute, the noise-aware searcher's regret at most half of TPE's where the
seeds disagree more than the configurations differ (this space).

    .venv/bin/python -m benchmarks.searchers [--sweeps 100] [--workers 2] [--plot FILE.png]
"""

from __future__ import annotations

import argparse
import math
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.common import Result
from sentsweep.experiments.tsdae.published import TABLE_6, TABLE_7

SEEDS_PER_CONFIGURATION = 3
BUDGET = 24  # trials: 8 configurations on every seed
RUNGS = 9  # evaluations per trial (TSDAE App. A: every 1.5K of 30K steps, about 20; fewer keeps the brackets small)
CURVE_RISE = 3.0  # how far below its final score a run starts
NOISE_SD = 0.4
COMPUTE_LEVELS = (6, 12, 18, 24)
POOLINGS = ("cls", "mean")
RATIOS = [ratio for ratio in sorted(TABLE_6) if ratio <= 0.8]
DEFAULT_PLOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "searchers_regret.png"
SEARCHERS = ("random search", "TPE (mean only)", "noise-gp", "Hyperband (random configurations)",
             "TPE + HyperbandPruner", "rung-gp (model per rung, seeds' test)")
STEP_RUNGS = tuple(round(fraction * RUNGS) for fraction in (1 / 9, 1 / 3))  # the step race's rungs: 1 and 3
ASSUMES = {
    "random search": "nothing",
    "TPE (mean only)": "each configuration's mean over its seeds is exact",
    "noise-gp": "a smooth score; each mean as noisy as its standard error",
    "Hyperband (random configurations)": "the early rungs rank configurations as the end does",
    "TPE + HyperbandPruner": "both of the above",
    "rung-gp (model per rung, seeds' test)": "a smooth score at the largest rung with 4 configurations, whose order "
                                             "the end keeps; seeds shared across configurations (paired test)",
}


def true_score(ratio: float, pooling: str) -> float:
    """Table 6 over the ratio (linear between its ratios) plus Table 7's difference of the pooling from CLS."""
    return float(np.interp(ratio, RATIOS, [TABLE_6[r] for r in RATIOS]) + TABLE_7[pooling] - TABLE_7["cls"])


BEST_SCORE = max(true_score(ratio, pooling) for ratio in RATIOS for pooling in POOLINGS)


def space_spread(points: int = 801) -> float:
    """The sd of the true scores over the space (ratios uniform, poolings equally likely)."""
    ratios = np.linspace(RATIOS[0], RATIOS[-1], points)
    return float(np.std([true_score(ratio, pooling) for ratio in ratios for pooling in POOLINGS]))


def curve(true: float, offset: float, rung: int) -> float:
    """A seed's score at evaluation `rung` (1..RUNGS) before its evaluation noise (module docstring)."""
    return true + offset - CURVE_RISE * (1 - rung / RUNGS) ** 2


def regret_at(trace: list[tuple[float, float]], levels=COMPUTE_LEVELS) -> list[float]:
    """The regret at each compute level: that of the last answer given by then (`trace`: (compute spent, regret)
    in order); before any answer, the regret of knowing nothing (nan)."""
    values = []
    for level in levels:
        given = [regret for spent, regret in trace if spent <= level + 1e-9]
        values.append(given[-1] if given else math.nan)
    return values


def _space():
    import optuna

    return {"ratio": optuna.distributions.FloatDistribution(RATIOS[0], RATIOS[-1]),
            "pooling": optuna.distributions.CategoricalDistribution(list(POOLINGS))}


def make_study(searcher: str, seed: int):
    """The Optuna study of `searcher` (module docstring), seeded with `seed`."""
    import optuna

    from sentsweep.sweep.search.noise_aware_sampler import NoiseAwareGPSampler
    from sentsweep.sweep.search.optuna_sampler import TPE_SETTINGS
    from sentsweep.sweep.search.rung_model_sampler import RungModelSampler, SeedTestPruner

    sampler = (optuna.samplers.RandomSampler(seed=seed) if searcher.startswith(("random ", "Hyperband")) else
               NoiseAwareGPSampler(seed=seed) if searcher == "noise-gp" else
               RungModelSampler(seed=seed) if searcher.startswith("rung-gp") else
               optuna.samplers.TPESampler(seed=seed, **TPE_SETTINGS))
    pruner = (optuna.pruners.HyperbandPruner(min_resource=1, max_resource=RUNGS, reduction_factor=3)
              if "Hyperband" in searcher else SeedTestPruner(STEP_RUNGS) if searcher.startswith("rung-gp") else
              optuna.pruners.NopPruner())
    return optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner)


def simulate_sweep(searcher: str, sweep: int, noise_sd: float = NOISE_SD) -> list[tuple[float, float]]:
    """One simulated sweep of `searcher`: its (compute spent, regret) after each configuration it ended."""
    import optuna

    from sentsweep.sweep.search.noise_aware_sampler import SE_ATTRIBUTE
    from sentsweep.sweep.search.rung_model_sampler import RUNG_SEEDS_ATTRIBUTE
    from sentsweep.sweep.search.seed_groups import mean_and_standard_error

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng([sweep, int(noise_sd * 1000)])
    study, space = make_study(searcher, sweep), _space()
    spent_rungs, best, trace = 0, None, []  # compute counted in seed-rungs, whole numbers, so the budget is met exactly
    while spent_rungs < BUDGET * RUNGS:
        trial = study.ask(space)
        true = true_score(trial.params["ratio"], trial.params["pooling"])
        offsets = rng.normal(0.0, noise_sd, SEEDS_PER_CONFIGURATION)
        pruned, by_rung = False, {}
        for rung in range(1, RUNGS + 1):
            scores = [curve(true, offset, rung) + rng.normal(0.0, noise_sd / 5) for offset in offsets]
            by_rung[str(rung)] = [float(score) for score in scores]
            trial.set_user_attr(RUNG_SEEDS_ATTRIBUTE, dict(by_rung))
            trial.report(float(np.mean(scores)), rung)
            if rung < RUNGS and trial.should_prune():
                pruned = True
                break
        spent_rungs += SEEDS_PER_CONFIGURATION * rung
        if pruned:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            mean, se, _ = mean_and_standard_error(scores)
            trial.set_user_attr(SE_ATTRIBUTE, se)
            study.tell(trial, mean)
            if best is None or mean > best[0]:
                best = (mean, true)
        if best is not None:
            trace.append((spent_rungs / RUNGS, BEST_SCORE - best[1]))
    return trace


def _sweep_regrets(job: tuple[str, int]) -> tuple[str, list[float]]:
    import torch

    torch.set_num_threads(1)
    searcher, sweep = job
    return searcher, regret_at(simulate_sweep(searcher, sweep))


def run_sweeps(sweeps: int, workers: int, searchers=SEARCHERS) -> dict:
    """{searcher: array (sweeps x compute levels) of regrets}."""
    jobs = [(searcher, sweep) for searcher in searchers for sweep in range(sweeps)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(_sweep_regrets, jobs, chunksize=4))
    regrets: dict = {}
    for searcher, values in done:
        regrets.setdefault(searcher, []).append(values)
    return {key: np.array(values, dtype=float) for key, values in regrets.items()}


def summary(values: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) over the sweeps that had an answer; nan without any."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return math.nan, math.nan
    return float(finite.mean()), float(finite.std(ddof=1) / math.sqrt(len(finite))) if len(finite) > 1 else math.nan


def table(regrets: dict) -> str:
    header = "| searcher | assumes | " + " | ".join(f"regret at {level} trials" for level in COMPUTE_LEVELS) + " |"
    lines = [header, "|---|---|" + "---|" * len(COMPUTE_LEVELS)]
    for searcher in SEARCHERS:
        cells = []
        for column in regrets[searcher].T:
            answered = int(np.isfinite(column).sum())
            mean, se = summary(column)
            cells.append("no answer" if not answered else
                         f"{mean:.3f} ± {se:.3f}" + (f" ({answered} of {len(column)})" if answered < len(column)
                                                     else ""))
        lines.append(f"| {searcher} | {ASSUMES[searcher]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(regrets: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 5), layout="constrained")
    for searcher in SEARCHERS:
        means, errors = zip(*(summary(column) for column in regrets[searcher].T))
        axis.errorbar(COMPUTE_LEVELS, means, yerr=errors, marker="o", capsize=3, label=searcher)
    axis.set_title(f"seed sd {NOISE_SD}, configurations' sd {space_spread():.2f}: regret against compute")
    axis.set_xlabel("compute (trials: one seed trained to the end)")
    axis.set_ylabel("regret (true best - true score of the answer), mean ± se")
    axis.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(figure)
    return path


def run(sweeps: int = 100, workers: int | None = None, plot_path: Path = DEFAULT_PLOT) -> list[Result]:
    workers = workers or min(2, os.cpu_count() or 1)
    print(f"{sweeps} simulated sweeps per searcher, {BUDGET} trials each ({SEEDS_PER_CONFIGURATION} seeds per "
          f"configuration, {RUNGS} evaluations per trial); seed sd {NOISE_SD}, the configurations' true scores' sd "
          f"{space_spread():.2f} over the space; the true best {BEST_SCORE:.2f}")
    regrets = run_sweeps(sweeps, workers)
    print(f"\nRegret (mean ± se over the sweeps; in parentheses the sweeps with an answer by then, where not all)"
          f"\n\n{table(regrets)}")
    print(f"\nPlot: {plot(regrets, plot_path).relative_to(Path(__file__).resolve().parents[1])}"
          if plot_path == DEFAULT_PLOT else f"\nPlot: {plot(regrets, plot_path)}")
    tpe = summary(regrets["TPE (mean only)"][:, -1])[0]
    return [Result(f"{searcher} against TPE (mean only), {BUDGET} trials", 1 / summary(regrets[searcher][:, -1])[0],
                   1 / tpe, "1 / regret", "TPE's", 2.0 if searcher == "noise-gp" else None)
            for searcher in SEARCHERS if searcher != "TPE (mean only)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="processes (default: 2 or the cores, fewer)")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT)
    args = parser.parse_args()
    for result in run(args.sweeps, args.workers, args.plot):
        print(result.row())


if __name__ == "__main__":
    main()
