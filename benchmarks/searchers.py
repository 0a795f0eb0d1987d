"""Searchers against each other on simulated TSDAE sweeps over a mixed space: regret against compute at the same
budget, the seeds a repeated axis, in two regimes of the seeds' spread (no model: minutes).

The space is the TSDAE paper's configuration search (TSDAE App. A): the deletion ratio continuous over Table 6's
range [0.1, 0.9] and the pooling a choice of Table 7's cls, mean, max. A configuration's true score (STS benchmark
dev Spearman x 100) is Table 6 over the ratio plus Table 7's difference of its pooling from CLS:

- TSDAE App. A, Table 6 "Results with different noise ratio": "Ratio 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 /
  Score 77.81 77.70 77.75 78.02 78.25 78.77 78.19 77.69 75.67" (deletion, CLS);
- TSDAE App. A, Table 7 "Results with different pooling methods": "Method CLS Mean Max / Score 78.77 78.84 78.17"
  (at ratio 0.6).

The project's own choices: between Table 6's ratios the score follows the shape-preserving cubic through them
(PCHIP: smooth, and no value beyond its neighbours), and a pooling's difference from CLS, measured only at 0.6, is
the same at every ratio. The true best is then 78.84 (ratio 0.6, mean pooling) and the true scores' sd over the
space (ratios uniform, poolings equally likely) `space_spread()`, 0.63.

The seeds' spread, the regimes (`REGIMES`): each run of a configuration on seed k is off its true score by an
offset drawn once per (configuration, seed) with sd `seed_sd`; the seeds of different configurations are
independent. TSDAE App. C, Table 9 ("'+/-' separates the mean value and standard deviation over scores of 5 random
seeds") gives TSDAE's seed sd on each checkpoint; its App. A searched with BERT-base:

- seeds disagree more than the configurations differ: sd 1.1 (Table 9, ELECTRA-base, TSDAE, "56.6 +/- 1.1 8.0 +/-
  0.3 69.0 +/- 1.6 66.2 +/- 5.6 49.9 +/- 1.1": its average's sd), above the configurations' 0.63;
- seeds disagree less: sd 0.4 (Table 9, BERT-base, TSDAE, "59.4 +/- 0.3 14.5 +/- 0.1 73.0 +/- 0.4 74.0 +/- 0.4
  55.2 +/- 0.2": its largest), below 0.63.

Table 9's sds are of USEB test scores, App. A's scores STS dev Spearman: carrying the one to the other is the
project's choice. Each evaluation adds noise of a fifth of the seed sd. A run's learning curve rises to its final
score as `true - CURVE_RISE * (1 - fraction) ** 2` over its `RUNGS` evaluations, so a multi-fidelity searcher sees
at each rung the order the end will keep, up to the noise.

Compute is counted in whole trials (one seed trained to the end): a configuration on every seed costs
`SEEDS_PER_CONFIGURATION`, one stopped at rung k of `RUNGS` that times k / RUNGS. Every searcher gets `BUDGET`
trials (`CONFIGURATIONS` configurations on every seed). Its answer at a compute level is the configuration it would
report from what it had ended by then, among the configurations trained to the end: a mean-only searcher's best
mean over the seeds (the sweep table's best), a noise-aware one's model's best (`noise_aware_sampler.model_best`:
the best posterior mean of the GP of the means with their standard errors). Its regret is the true best's
score minus its answer's true score. Each of `--sweeps` sweeps per regime draws its own offsets; every searcher is
seeded by the sweep's number. Two more rows swap the answer rule over the same sweeps (noise-gp answered by its
best mean, TPE by the model's best), so the table shows what the proposals do and what the rule does.

The searchers, what each assumes, and how it starts (`ASSUMES`): random search, TPE (mean only), noise-gp, rung-gp,
Hyperband and TPE + HyperbandPruner (Optuna's). Ray Tune's own are not run: `TuneBOHB` needs hpbandster and
ConfigSpace, which the lock does not hold, and Ray's `HyperBandScheduler` runs only inside a Ray Tune run, seconds
each, too long for hundreds of simulated sweeps; Optuna's `HyperbandPruner` runs Hyperband's brackets (Li et al.
2018), each an asynchronous successive halving, where Ray's halves synchronously.

The goal (docs/performance.md): at equal compute, the noise-aware searcher's regret at most half of TPE's where the
seeds disagree more than the configurations differ.

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
CONFIGURATIONS = 20
BUDGET = SEEDS_PER_CONFIGURATION * CONFIGURATIONS  # trials
STARTUP_CONFIGURATIONS = CONFIGURATIONS // 4  # TPE's and noise-gp's random start: a quarter of the budget
COMPUTE_LEVELS = (15, 30, 45, 60)
RUNGS = 9  # evaluations per trial (TSDAE App. A: every 1.5K of 30K steps, about 20; fewer keeps the brackets small)
CURVE_RISE = 3.0  # how far below its final score a run starts
POOLINGS = ("cls", "mean", "max")
RATIOS = sorted(TABLE_6)
REGIMES = {"seeds disagree more": 1.1, "seeds disagree less": 0.4}  # seed sd (module docstring)
NOISY_REGIME = "seeds disagree more"
DEFAULT_PLOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "searchers_regret.png"
STEP_RUNGS = tuple(round(fraction * RUNGS) for fraction in (1 / 9, 1 / 3))  # the step race's rungs: 1 and 3
MEAN, MODEL = "best mean", "model's best"  # the answer rules
# row: (searcher whose sweeps it is, the answer rule)
ROWS = {
    "random search": ("random search", MEAN),
    "TPE (mean only)": ("TPE (mean only)", MEAN),
    "noise-gp": ("noise-gp", MODEL),
    "rung-gp": ("rung-gp", MODEL),
    "Hyperband (random configurations)": ("Hyperband (random configurations)", MEAN),
    "TPE + HyperbandPruner": ("TPE + HyperbandPruner", MEAN),
    "noise-gp answered by its best mean": ("noise-gp", MEAN),
    "TPE answered by the model's best": ("TPE (mean only)", MODEL),
}
SEARCHERS = tuple(dict.fromkeys(searcher for searcher, _ in ROWS.values()))
ASSUMES = {
    "random search": "nothing; answers its best mean",
    "TPE (mean only)": f"each configuration's mean over its seeds is exact; first {STARTUP_CONFIGURATIONS} of "
                       f"{CONFIGURATIONS} configurations random; answers its best mean",
    "noise-gp": f"a smooth score, on a length scale the model averages over; each mean as noisy as its standard "
                f"error; Thompson sampling after {STARTUP_CONFIGURATIONS} of {CONFIGURATIONS} configurations random; "
                f"answers its model's best",
    "rung-gp": "a smooth score at the largest rung with 4 configurations (random before), whose order the end "
               "keeps; stops at evaluations 1 and 3 of 9 on the seeds' paired t (seeds shared across "
               "configurations); answers its model's best",
    "Hyperband (random configurations)": "the early rungs rank configurations as the end does (Optuna's "
                                         "HyperbandPruner, 1 to 9 evaluations, reduction factor 3); answers its "
                                         "best mean",
    "TPE + HyperbandPruner": f"both of the above (TPE's first {STARTUP_CONFIGURATIONS} configurations random); "
                             f"answers its best mean",
    "noise-gp answered by its best mean": "noise-gp's sweeps, the table's answer rule",
    "TPE answered by the model's best": "TPE's sweeps, noise-gp's answer rule",
}


def _table_6_curve():
    from scipy.interpolate import PchipInterpolator

    return PchipInterpolator(RATIOS, [TABLE_6[ratio] for ratio in RATIOS])


TABLE_6_CURVE = _table_6_curve()


def true_score(ratio: float, pooling: str) -> float:
    """Table 6 over the ratio (the PCHIP through its ratios) plus Table 7's difference of the pooling from CLS."""
    return float(TABLE_6_CURVE(ratio) + TABLE_7[pooling] - TABLE_7["cls"])


def space_spread(points: int = 801) -> float:
    """The sd of the true scores over the space (ratios uniform, poolings equally likely)."""
    ratios = np.linspace(RATIOS[0], RATIOS[-1], points)
    return float(np.std([true_score(ratio, pooling) for ratio in ratios for pooling in POOLINGS]))


BEST_SCORE = max(true_score(ratio, pooling) for ratio in np.linspace(RATIOS[0], RATIOS[-1], 801)
                 for pooling in POOLINGS)


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

    tpe_settings = TPE_SETTINGS | {"n_startup_trials": STARTUP_CONFIGURATIONS}
    sampler = (optuna.samplers.RandomSampler(seed=seed) if searcher.startswith(("random ", "Hyperband")) else
               NoiseAwareGPSampler(seed=seed, startup_trials=STARTUP_CONFIGURATIONS) if searcher == "noise-gp" else
               RungModelSampler(seed=seed) if searcher == "rung-gp" else
               optuna.samplers.TPESampler(seed=seed, **tpe_settings))
    pruner = (optuna.pruners.HyperbandPruner(min_resource=1, max_resource=RUNGS, reduction_factor=3)
              if "Hyperband" in searcher else SeedTestPruner(STEP_RUNGS) if searcher == "rung-gp" else
              optuna.pruners.NopPruner())
    # a fixed name: HyperbandPruner puts a trial in its bracket by a hash of the study's name and the trial's number
    return optuna.create_study(study_name=f"sweep-{seed}", direction="maximize", sampler=sampler, pruner=pruner)


def _run_configuration(study, trial, true: float, rng: np.random.Generator, seed_sd: float) -> int:
    """Runs `trial` (true score `true`) on every seed rung by rung until its pruner stops it or it ends, tells the
    study, and returns the rungs it ran."""
    import optuna

    from sentsweep.sweep.search.noise_aware_sampler import SE_ATTRIBUTE
    from sentsweep.sweep.search.rung_model_sampler import RUNG_SEEDS_ATTRIBUTE
    from sentsweep.sweep.search.seed_groups import mean_and_standard_error

    offsets = rng.normal(0.0, seed_sd, SEEDS_PER_CONFIGURATION)
    by_rung = {}
    for rung in range(1, RUNGS + 1):
        scores = [curve(true, offset, rung) + rng.normal(0.0, seed_sd / 5) for offset in offsets]
        by_rung[str(rung)] = [float(score) for score in scores]
        trial.set_user_attr(RUNG_SEEDS_ATTRIBUTE, dict(by_rung))
        trial.report(float(np.mean(scores)), rung)
        if rung < RUNGS and trial.should_prune():
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            return rung
    mean, se, _ = mean_and_standard_error(scores)
    trial.set_user_attr(SE_ATTRIBUTE, se)
    study.tell(trial, mean)
    return RUNGS


def simulate_sweep(searcher: str, sweep: int, seed_sd: float, budget: int = BUDGET) -> tuple[list, list]:
    """One simulated sweep of `searcher` with seeds of sd `seed_sd` and `budget` trials: (its trials, each with its
    true score as the user attribute "true_score"; (compute spent, trial number) after each configuration it
    ended)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng([sweep, int(seed_sd * 1000)])
    study, space = make_study(searcher, sweep), _space()
    spent_rungs, log = 0, []  # compute counted in seed-rungs, whole numbers, so the budget is met exactly
    while spent_rungs < budget * RUNGS:
        trial = study.ask(space)
        true = true_score(trial.params["ratio"], trial.params["pooling"])
        trial.set_user_attr("true_score", true)
        spent_rungs += SEEDS_PER_CONFIGURATION * _run_configuration(study, trial, true, rng, seed_sd)
        log.append((spent_rungs / RUNGS, trial.number))
    return study.get_trials(deepcopy=False), log


def answer(trials: list, rule: str):
    """The configuration a searcher answers with from `trials` under `rule` (module docstring); None before any
    configuration was trained to the end."""
    from optuna.trial import TrialState

    from sentsweep.sweep.search.noise_aware_sampler import model_best

    ended = [trial for trial in trials if trial.state == TrialState.COMPLETE]
    if not ended:
        return None
    return max(ended, key=lambda trial: trial.value) if rule == MEAN else model_best(ended)


def regrets_by_rule(trials: list, log: list[tuple[float, int]], rules, levels=COMPUTE_LEVELS) -> dict:
    """{rule: regret at each compute level}: the answer from the configurations ended by then (nan: none yet)."""
    regrets = {rule: [] for rule in rules}
    for level in levels:
        ended = [number for spent, number in log if spent <= level + 1e-9]
        known = [trial for trial in trials if ended and trial.number <= ended[-1]]
        for rule in rules:
            chosen = answer(known, rule)
            regrets[rule].append(math.nan if chosen is None else BEST_SCORE - chosen.user_attrs["true_score"])
    return regrets


def _sweep_regrets(job: tuple[str, str, int, int]) -> tuple[str, str, dict]:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)  # one process per core: BLAS threads spinning on tiny matrices slow a GP fit tenfold
    regime, searcher, sweep, budget = job
    rules = {rule for row_searcher, rule in ROWS.values() if row_searcher == searcher}
    trials, log = simulate_sweep(searcher, sweep, REGIMES[regime], budget)
    return regime, searcher, regrets_by_rule(trials, log, sorted(rules))


def run_sweeps(sweeps: int, workers: int, budget: int = BUDGET) -> dict:
    """{regime: {row: array (sweeps x compute levels) of regrets}}: `sweeps` sweeps per searcher and regime."""
    jobs = [(regime, searcher, sweep, budget) for regime in REGIMES for searcher in SEARCHERS
            for sweep in range(sweeps)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(_sweep_regrets, jobs, chunksize=2))
    collected: dict = {}
    for regime, searcher, by_rule in done:
        for row, (row_searcher, rule) in ROWS.items():
            if row_searcher == searcher:
                collected.setdefault(regime, {}).setdefault(row, []).append(by_rule[rule])
    return {regime: {row: np.array(values, dtype=float) for row, values in rows.items()}
            for regime, rows in collected.items()}


def summary(values: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) over the sweeps that had an answer (nan: none had); nan without any."""
    from sentsweep.sweep.search.seed_groups import mean_and_standard_error

    mean, se, _ = mean_and_standard_error(list(values))
    return mean, se


def table(regrets: dict) -> str:
    """One regime's rows: each row's regret at each compute level, mean ± se over the sweeps."""
    header = ("| searcher | assumes | sweeps | " + " | ".join(f"regret at {level} trials" for level in COMPUTE_LEVELS)
              + " |")
    lines = [header, "|---|---|---|" + "---|" * len(COMPUTE_LEVELS)]
    for row in ROWS:
        cells = []
        for column in regrets[row].T:
            answered = int(np.isfinite(column).sum())
            mean, se = summary(column)
            cells.append("no answer" if not answered else
                         f"{mean:.3f} ± {se:.3f}" + (f" ({answered} of {len(column)})" if answered < len(column)
                                                     else ""))
        lines.append(f"| {row} | {ASSUMES[row]} | {len(regrets[row])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(regrets: dict, path: Path) -> Path:
    """Regret against compute, one panel per regime, each row's mean ± se (the answer-rule swaps dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(regrets), figsize=(13, 5.5), layout="constrained", sharey=True)
    for axis, (regime, rows) in zip(np.atleast_1d(axes), regrets.items()):
        for row in ROWS:
            means, errors = zip(*(summary(column) for column in rows[row].T))
            axis.errorbar(COMPUTE_LEVELS, means, yerr=errors, marker="o", capsize=3, label=row,
                          linestyle="--" if "answered" in row else "-")
        axis.set_title(f"{regime}: seed sd {REGIMES[regime]}, configurations' sd {space_spread():.2f}")
        axis.set_xlabel("compute (trials: one seed trained to the end)")
    np.atleast_1d(axes)[0].set_ylabel("regret (true best - true score of the answer), mean ± se")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(figure)
    return path


def results(regrets: dict) -> list[Result]:
    """Each row against TPE (mean only) at the whole budget, per regime, as 1 / regret; the goal on noise-gp where
    the seeds disagree more."""
    rows = []
    for regime, by_row in regrets.items():
        tpe = summary(by_row["TPE (mean only)"][:, -1])[0]
        rows += [Result(f"{row} against TPE (mean only), {regime}, {BUDGET} trials",
                        1 / summary(by_row[row][:, -1])[0], 1 / tpe, "1 / regret", "TPE's",
                        2.0 if row == "noise-gp" and regime == NOISY_REGIME else None)
                 for row in ROWS if row != "TPE (mean only)"]
    return rows


def run(sweeps: int = 100, workers: int | None = None, plot_path: Path = DEFAULT_PLOT) -> list[Result]:
    workers = workers or min(2, os.cpu_count() or 1)
    print(f"{sweeps} simulated sweeps per searcher and regime, {BUDGET} trials each ({CONFIGURATIONS} configurations "
          f"x {SEEDS_PER_CONFIGURATION} seeds, {RUNGS} evaluations per trial); the configurations' true scores' sd "
          f"{space_spread():.2f} over the space; the true best {BEST_SCORE:.2f}")
    regrets = run_sweeps(sweeps, workers)
    for regime, by_row in regrets.items():
        print(f"\n{regime} (seed sd {REGIMES[regime]}): regret (mean ± se over the sweeps; in parentheses the "
              f"sweeps with an answer by then, where not all)\n\n{table(by_row)}")
    shown = plot(regrets, plot_path)
    root = Path(__file__).resolve().parents[1]
    print(f"\nPlot: {shown.relative_to(root) if shown.is_relative_to(root) else shown}")
    return results(regrets)


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
