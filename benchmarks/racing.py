"""Racing over seeds against the fixed 5-seed grid, on a simulated TSDAE sweep (no model: seconds).

Each of `--sweeps` simulated sweeps draws one table of scores for the TSDAE paper's grid (9 deletion ratios x 3
poolings, its published 5-seed means as the true means, seed noise sd 0.4); every race (`Race`, `AsyncRace`,
`StepRace`, with the command line's defaults and variants), the fixed grid on 2, 3 and 5 seeds and Ray Tune's ASHA
with the seed as an axis read the same draws, scheduled on 1, 16 and 64 simulated slots
(`sentsweep.analysis.schedule.simulate_schedule`). It prints how often each finds the best, its trials, regret,
wall-clock and slot use, and PASS or FAIL for each goal. The design, its assumptions and the goals:
docs/performance.md, "Racing".

    .venv/bin/python -m benchmarks.racing [--sweeps 500] [--section ways]"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial

import numpy as np

from sentsweep.analysis.race_schedules import make_race
from sentsweep.analysis.racing import CONTINUE, RACE_ALPHA, STOP
from sentsweep.analysis.schedule import FixedGrid, simulate_schedule
from sentsweep.analysis.significance import best_group
from sentsweep.analysis.step_racing import RUNGS
from sentsweep.experiments.tsdae.published import TABLE_6, TABLE_7

NOISE_SD = 0.4  # TSDAE App. C, Table 9: the largest sd of TSDAE with BERT-base over 5 seeds
OTHER_NOISE_SDS = (0.3, 0.5, 0.7)
SEEDS = [0, 1, 2, 3, 4]
GRID_SEEDS = (2, 3, 5)  # the fixed grid on the first 2, 3 and all 5 seeds
INITIAL_SEEDS = 2
SLOTS = 16  # a cluster of 16 GPUs, one trial each
SLOT_COUNTS = (1, 16, 64)  # the schedules compared at the defaults (one slot: no run-ahead, no barrier cost)
# The races compared on the same draws and durations (module docstring), by their names in the output.
RACES = {"round race": partial(make_race, "rounds"), "async race": partial(make_race, "async"),
         "async race, family='level'": partial(make_race, "async-per-level")}
DESIGN = dict(test="pooled t", correction="holm", alpha=RACE_ALPHA, initial_seeds=INITIAL_SEEDS, tolerance=0.0)
# The other settings shown, each changing one or two things from DESIGN (as command-line options).
VARIANTS = {
    "--race-alpha 0.05 (the tables' --alpha)": dict(DESIGN, alpha=0.05),
    "--race-alpha 0.10": dict(DESIGN, alpha=0.10),
    "--race-alpha 0.25": dict(DESIGN, alpha=0.25),
    f"--race-tolerance {NOISE_SD}": dict(DESIGN, tolerance=NOISE_SD),
    f"--race-tolerance {NOISE_SD} --correction bonferroni": dict(DESIGN, tolerance=NOISE_SD, correction="bonferroni"),
    "--race-test paired": dict(DESIGN, test="paired t"),
    "--race-initial-seeds 3": dict(DESIGN, initial_seeds=3),
    "--race-alpha 0.05 --race-budget 67 (half the grid)": dict(DESIGN, alpha=0.05, max_trials=67),
}


def true_means() -> dict:
    """TSDAE App. A: Table 6 (ratio, CLS) plus Table 7's difference of each pooling from CLS at ratio 0.6."""
    return {f"r{ratio:.1f}-{pooling}": value + TABLE_7[pooling] - TABLE_7["cls"]
            for ratio, value in TABLE_6.items() for pooling in TABLE_7}


def race_once(kind, means: dict, scores: dict, durations: dict, **settings) -> tuple:
    """(chosen configuration, trials run, configurations eliminated, wall-clock, busy trial-time) of one race of
    `kind` (a race of RACES) on `scores`, scheduled on SLOTS slots with `durations`."""
    race = kind(list(means), SEEDS, **settings)
    wall, busy, trials = simulate_schedule(race, durations, flat(scores), SLOTS)
    return race.best, trials, set(race.eliminated), wall, busy


def flat(scores: dict) -> dict:
    return {(config, seed): value for config, by_seed in scores.items() for seed, value in by_seed.items()}


def trial_durations(means: dict, rng: np.random.Generator) -> dict:
    """Each (config, seed)'s duration, uniform between 0.5 and 1.5 trial means (module docstring)."""
    return {(config, seed): rng.uniform(0.5, 1.5) for config in means for seed in SEEDS}


def draw(means: dict, noise_sd: float, rng: np.random.Generator) -> dict:
    noise = rng.normal(0.0, noise_sd, size=(len(means), len(SEEDS)))
    return {config: dict(zip(SEEDS, mean + row)) for (config, mean), row in zip(means.items(), noise)}


def fixed_grid_choice(scores: dict, seeds: int) -> str:
    return max(scores, key=lambda config: np.mean([scores[config][s] for s in SEEDS[:seeds]]))


def near_best(means: dict, noise_sd: float) -> set:
    """The configurations whose true mean is within one noise sd of the true best's: those that "find the best"."""
    top = max(means.values())
    return {config for config, mean in means.items() if mean >= top - noise_sd}


def simulate(sweeps: int, settings: dict, noise_sd: float = NOISE_SD, seed: int = 0) -> dict:
    """For each race of RACES (same draws, same durations): over `sweeps` races on the TSDAE grid, the share
    finding the best, the mean regret (true best - the chosen one's true mean), the mean trials, the share
    eliminating the true best, the mean wall-clock and slot utilisation on SLOTS slots; over `sweeps` races where
    all 27 true means are equal: the share eliminating any configuration and the mean share of the
    configurations eliminated (the chance that a given one is dropped); over `sweeps` races where one
    configuration is one noise sd better than 26 equal ones: the share dropping it. Also the fixed grids' choices
    and the fixed 5-seed grid's wall-clock on the same durations."""
    means = true_means()
    top = max(means.values())
    best = max(means, key=means.get)
    good = near_best(means, noise_sd)
    rng, timing = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    runs = {name: [] for name in RACES}
    grids, grid_walls = {seeds: [] for seeds in GRID_SEEDS}, []
    for _ in range(sweeps):
        scores, durations = draw(means, noise_sd, rng), trial_durations(means, timing)
        for seeds, chosen in grids.items():
            chosen.append(fixed_grid_choice(scores, seeds))
        grid_walls.append(simulate_schedule(FixedGrid(list(flat(scores))), durations, flat(scores), SLOTS)[0])
        for name, kind in RACES.items():
            runs[name].append(race_once(kind, means, scores, durations, **settings))
    flat_means = dict.fromkeys(means, top)
    lone = dict(flat_means, **{best: top + noise_sd})
    null_draws = [(draw(flat_means, noise_sd, rng), trial_durations(means, timing)) for _ in range(sweeps)]
    lone_draws = [(draw(lone, noise_sd, rng), trial_durations(means, timing)) for _ in range(sweeps)]
    result = {"grids": grids, "grid_wall": float(np.mean(grid_walls))}
    for name, kind in RACES.items():
        chosen, trials, eliminated, wall, busy = zip(*runs[name])
        null = [race_once(kind, flat_means, *pair, **settings)[2] for pair in null_draws]
        lone_dropped = [best in race_once(kind, lone, *pair, **settings)[2] for pair in lone_draws]
        result[name] = {
            "found": float(np.mean([c in good for c in chosen])),
            "regret": float(np.mean([top - means[c] for c in chosen])),
            "trials": float(np.mean(trials)), "best_dropped": float(np.mean([best in e for e in eliminated])),
            "wall": float(np.mean(wall)), "utilisation": float(np.mean(np.array(busy) / (SLOTS * np.array(wall)))),
            "null_any": float(np.mean([bool(e) for e in null])),
            "null_each": float(np.mean([len(e) for e in null])) / len(flat_means),
            "lone_dropped": float(np.mean(lone_dropped))}
    return result


def schedules(sweeps: int, slot_counts: tuple = SLOT_COUNTS, seed: int = 2) -> dict:
    """{(name, slots): (trials, wall-clock, utilisation)}, means over `sweeps` draws at the defaults, of the fixed
    5-seed grid and each race of RACES on each number of slots, with the same scores and durations."""
    means = true_means()
    rng, timing = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    kinds = {"fixed 5-seed grid": None, **RACES}
    runs = {}
    for _ in range(sweeps):
        scores, durations = flat(draw(means, NOISE_SD, rng)), trial_durations(means, timing)
        for slots in slot_counts:
            for name, kind in kinds.items():
                schedule = FixedGrid(list(scores)) if kind is None else kind(list(means), SEEDS, **DESIGN)
                wall, busy, trials = simulate_schedule(schedule, durations, scores, slots)
                runs.setdefault((name, slots), []).append((trials, wall, busy / (slots * wall)))
    return {key: tuple(np.mean(values, axis=0)) for key, values in runs.items()}


def describe(result: dict, grid_trials: int, noise_sd: float = NOISE_SD) -> str:
    return (f"found {result['found']:.1%}, regret {result['regret']:.2f}, {result['trials']:.1f} trials "
            f"({result['trials'] / grid_trials:.0%} of {grid_trials}), {result['wall']:.2f} trial-means of "
            f"wall-clock on {SLOTS} slots ({result['utilisation']:.0%} busy), true best dropped in "
            f"{result['best_dropped']:.1%}; all equal: some config dropped in {result['null_any']:.1%} of races, "
            f"each config in {result['null_each']:.1%}; one config {noise_sd} better than 26 equal ones: dropped in "
            f"{result['lone_dropped']:.1%}")


def describe_grids(result: dict, noise_sd: float) -> list[str]:
    means = true_means()
    top, good = max(means.values()), near_best(means, noise_sd)
    return [f"fixed {seeds}-seed grid ({len(means) * seeds} trials), same draws: found "
            f"{np.mean([c in good for c in chosen]):.1%}, regret {np.mean([top - means[c] for c in chosen]):.2f}"
            for seeds, chosen in result["grids"].items()]


def run(sweeps: int = 500) -> list:
    from benchmarks.common import Result

    start = time.perf_counter()
    means = true_means()
    grid_trials = len(means) * len(SEEDS)
    print(f"{len(means)} configs, true means (TSDAE App. A, Tables 6-7) {min(means.values()):.2f} to "
          f"{max(means.values()):.2f}, seed noise sd {NOISE_SD} (TSDAE App. C, Table 9); found: the chosen config's "
          f"true mean >= true best - 1 noise sd ({len(near_best(means, NOISE_SD))} of {len(means)} configs pass); "
          f"regret: true best - chosen's true mean; {sweeps} simulated sweeps; race over seeds {SEEDS}")
    design = simulate(sweeps, DESIGN)
    rounds, levels, per_level = (design[name] for name in RACES)
    print(f"fixed 5-seed grid on the same durations: {design['grid_wall']:.2f} trial-means of wall-clock on {SLOTS} "
          f"slots")
    print(f"the command line's default settings: {DESIGN['test']}, --correction {DESIGN['correction']}, --race-alpha "
          f"{DESIGN['alpha']}, no tolerance, initial {INITIAL_SEEDS} seeds; the async race's test is Tukey's range at "
          f"--race-alpha / levels, family='level' is the round race's test per level")
    for name in RACES:
        print(f"{name}: {describe(design[name], grid_trials)}")
    for line in describe_grids(design, NOISE_SD):
        print(line)
    for variant, settings in VARIANTS.items():
        other = simulate(sweeps, settings)
        for name in RACES:
            print(f"  variant {variant}, {name}: {describe(other[name], grid_trials)}")
    for noise_sd in OTHER_NOISE_SDS:
        other = simulate(sweeps, DESIGN, noise_sd=noise_sd)
        print(f"  the default races at seed noise sd {noise_sd} ({len(near_best(means, noise_sd))} configs within 1 sd "
              f"of the best): {'; '.join(describe_grids(other, noise_sd))}")
        for name in RACES:
            print(f"    {name}: {describe(other[name], grid_trials, noise_sd)}")
    costs = schedules(min(sweeps, 200))
    print(f"schedules at the defaults, {min(sweeps, 200)} draws, trial durations uniform 0.5-1.5 trial-means (trials, "
          f"wall-clock in trial-means, slot utilisation):")
    for slots in SLOT_COUNTS:
        print(f"  {slots} slot{'s' * (slots > 1)}: " + "; ".join(
            f"{name} {trials:.1f}, {wall:.2f}, {use:.0%}" for (name, count), (trials, wall, use) in costs.items()
            if count == slots))
    found_goal, trials_goal = rounds["found"] >= 0.95, rounds["trials"] <= grid_trials / 2
    bound = DESIGN["alpha"] + 3 * math.sqrt(DESIGN["alpha"] * (1 - DESIGN["alpha"]) / sweeps)
    print(f"{'PASS' if found_goal else 'FAIL'}: round race finds the best in {rounds['found']:.1%} of sweeps "
          f"(goal >= 95%)")
    print(f"{'PASS' if trials_goal else 'FAIL'}: round race runs {rounds['trials']:.1f} trials per sweep "
          f"(goal <= {grid_trials / 2:.1f}, half the fixed grid's {grid_trials})")
    print(f"{'PASS' if levels['null_any'] <= bound else 'FAIL'}: async race, all configs equal: some config dropped "
          f"in {levels['null_any']:.1%} of races (goal <= {bound:.1%}: --race-alpha {DESIGN['alpha']:g} + 3 Monte "
          f"Carlo se; the races that test per round or level claim no such bound: {rounds['null_any']:.1%} and "
          f"{per_level['null_any']:.1%})")
    for name in list(RACES)[1:]:
        print(f"{name} against the round race, same draws: {design[name]['trials'] - rounds['trials']:+.1f} trials "
              f"per sweep ({design[name]['trials'] / rounds['trials'] - 1:+.0%}), wall-clock on {SLOTS} slots "
              f"{design[name]['wall'] / rounds['wall'] - 1:+.0%}, utilisation {design[name]['utilisation']:.0%} "
              f"against {rounds['utilisation']:.0%}")
    print(f"({time.perf_counter() - start:.1f} s)")
    return [
        Result("racing, simulated TSDAE grid: found the best", 100 * rounds["found"], 95.0, "%", "the 95% goal",
               goal=1.0),
        Result("racing, simulated TSDAE grid: sweeps per 1,000 trials", 1000 / rounds["trials"],
               1000 / grid_trials, "sweeps", "fixed 5-seed grid", goal=2.0),
        Result("async racing, simulated TSDAE grid: sweeps per 1,000 trials", 1000 / levels["trials"],
               1000 / grid_trials, "sweeps", "fixed 5-seed grid"),
        Result(f"async racing, simulated TSDAE grid: sweeps per 100 trial-means on {SLOTS} slots",
               100 / levels["wall"], 100 / design["grid_wall"], "sweeps", "fixed 5-seed grid"),
    ]

# --- the ways an answer is reached ---------------------------------------------------------------------------

WAY_SLOTS = (16, 64)
RUNG_CORRELATION = 0.5  # of a trial's noise between its rungs and its end (an assumption, `draw_rungs`)
RUNG_GAPS = (3.0, 1.0)  # common to every configuration at 1/9 and 1/3 of the steps: they cancel in every comparison
ASHA_REDUCTION_FACTOR = 3  # with RUNGS: successive halving's rungs with a reduction factor of 3, as the step race's
LATE_BLOOMER_LAG = 2.0  # noise sds the late-learning true best is behind at the rungs
GROUP_ALPHA = 0.05  # the tables' --alpha


class SimulatedAsha:
    """Ray Tune's ASHAScheduler over a grid with the seed as one more axis, as a schedule for simulate_schedule:
    trials handed out in order, each judged alone at each rung against the values recorded there before it
    (stopped below the (1 - 1/reduction_factor) quantile of them; the first goes on), as ASHAScheduler's
    `_Bracket.on_result` does. `answer`: the configuration with the best mean over its seeds that trained to
    the end."""

    def __init__(self, trials: list, rungs: tuple = RUNGS, reduction_factor: int = ASHA_REDUCTION_FACTOR):
        self.rungs, self.reduction_factor = rungs, reduction_factor
        self._grid = FixedGrid(trials)
        self._recorded: dict = {rung: [] for rung in rungs}
        self._finals: dict = {}

    def next_trial(self):
        return self._grid.next_trial()

    def reached(self, config, seed, done, value, step=None) -> str:
        recorded = self._recorded[done]
        cutoff = np.percentile(recorded, (1 - 1 / self.reduction_factor) * 100) if recorded else None
        recorded.append(value)
        return STOP if cutoff is not None and value < cutoff else CONTINUE

    def record(self, config, seed, value) -> None:
        if value is not None:
            self._finals.setdefault(config, []).append(value)

    def record_stopped(self, config, seed) -> None:
        """(A stopped trial leaves nothing to the answer.)"""

    def answer(self):
        return max(self._finals, key=lambda config: np.mean(self._finals[config])) if self._finals else None


def draw_rungs(scores: dict, means: dict, noise_sd: float, rng: np.random.Generator, lag: dict | None = None) -> dict:
    """{(config, seed): [value at each rung]} for the final `scores` of `draw`: the true mean minus RUNG_GAPS (and
    `lag`'s, per configuration) plus noise of sd `noise_sd` correlated RUNG_CORRELATION with the trial's final
    noise."""
    rungs = {}
    for config, by_seed in scores.items():
        for seed, final in by_seed.items():
            own = rng.normal(0.0, noise_sd, size=len(RUNG_GAPS))
            shared = (final - means[config]) * math.sqrt(RUNG_CORRELATION)
            noise = shared + own * math.sqrt(1 - RUNG_CORRELATION)
            rungs[(config, seed)] = [means[config] - gap - (lag or {}).get(config, 0.0) + value
                                     for gap, value in zip(RUNG_GAPS, noise)]
    return rungs


def ways(sweeps: int, slot_counts: tuple = WAY_SLOTS, seed: int = 4) -> dict:
    """{slots: {way: {in_group, grids_answer, found, compute, wall, utilisation}}}, means over `sweeps` draws of
    the TSDAE grid (the module docstring), each way on the same scores, rungs and durations: its answer in the
    5-seed grid's significance group, its answer the grid's, its answer within one noise sd of the true best; and,
    under "risks", the step race's rate of dropping a late-learning true best and, all configurations equal, of
    dropping any."""
    means = true_means()
    configs = list(means)
    order = [(config, seed_) for seed_ in SEEDS for config in configs]
    best = max(means, key=means.get)
    good = near_best(means, NOISE_SD)
    rng, timing = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    makers = {"fixed 5-seed grid": lambda: FixedGrid(order),
              "Ray Tune ASHA, seeds as an axis": lambda: SimulatedAsha(order),
              "async race": lambda: make_race("async", configs, SEEDS, **DESIGN),
              "race with steps": lambda: make_race("steps", configs, SEEDS, **DESIGN)}
    runs = {slots: {name: [] for name in makers} for slots in slot_counts}
    late, null = [], []
    flat_means = dict.fromkeys(means, max(means.values()))
    for _ in range(sweeps):
        scores = draw(means, NOISE_SD, rng)
        rungs, durations, table = draw_rungs(scores, means, NOISE_SD, rng), trial_durations(means, timing), flat(scores)
        group = set(best_group(scores, alpha=GROUP_ALPHA, correction="holm").group)
        grids_answer = fixed_grid_choice(scores, len(SEEDS))
        for slots in slot_counts:
            grid = None
            for name, make in makers.items():
                schedule = make()
                wall, busy, _ = simulate_schedule(schedule, durations, table, slots, rungs)
                grid = grid or (wall, busy)
                answer = (schedule.answer() if isinstance(schedule, SimulatedAsha) else
                          grids_answer if isinstance(schedule, FixedGrid) else schedule.best)
                runs[slots][name].append((answer in group, answer == grids_answer, answer in good, busy / grid[1],
                                          wall / grid[0], busy / (slots * wall)))
        race = make_race("steps", configs, SEEDS, **DESIGN)
        late_rungs = draw_rungs(scores, means, NOISE_SD, rng, {best: LATE_BLOOMER_LAG * NOISE_SD})
        simulate_schedule(race, durations, table, slot_counts[0], late_rungs)
        late.append(best in race.eliminated)
        equal = draw(flat_means, NOISE_SD, rng)
        race = make_race("steps", configs, SEEDS, **DESIGN)
        simulate_schedule(race, durations, flat(equal), slot_counts[0], draw_rungs(equal, flat_means, NOISE_SD, rng))
        null.append(bool(race.eliminated))
    figures = ("in_group", "grids_answer", "found", "compute", "wall", "utilisation")
    result = {slots: {name: dict(zip(figures, np.mean(values, axis=0)))
                      for name, values in by_way.items()} for slots, by_way in runs.items()}
    result["risks"] = {"late_bloomer_dropped": float(np.mean(late)), "null_any": float(np.mean(null))}
    return result


def ways_table(result: dict, sweeps: int) -> str:
    """The ways as a markdown table: per number of slots, each way's figures (`ways`)."""
    lines = [f"| way ({sweeps} sweeps) | slots | answer in the 5-seed grid's group | the grid's answer | finds the "
             "best | compute (of the grid's) | wall-clock (of the grid's) | slot use |", "|---" * 8 + "|"]
    for slots in (key for key in result if key != "risks"):
        for name, figures in result[slots].items():
            lines.append(f"| {name} | {slots} | {figures['in_group']:.1%} | {figures['grids_answer']:.1%} | "
                         f"{figures['found']:.1%} | {figures['compute']:.2f}x | {figures['wall']:.2f}x | "
                         f"{figures['utilisation']:.0%} |")
    return "\n".join(lines)


def ways_goals(result: dict, sweeps: int) -> list[str]:
    """The goals on the simulated ways, PASS or MISSED with the figures that say why."""
    lines = []
    slot_counts = [key for key in result if key != "risks"]
    for name in ("async race", "race with steps"):
        for slots in slot_counts:
            figures = result[slots][name]
            met = figures["wall"] <= 1.0 and figures["compute"] < 1.0
            grid_use = result[slots]["fixed 5-seed grid"]["utilisation"]
            lines.append(f"{'PASS' if met else 'MISSED'}: {name} on {slots} slots: wall-clock {figures['wall']:.2f}x "
                         f"of the grid's (goal <= 1.00x), compute {figures['compute']:.2f}x (goal < 1.00x), slot use "
                         f"{figures['utilisation']:.0%} against the grid's {grid_use:.0%}")
        worst = min(result[slots][name]["in_group"] for slots in slot_counts)
        lines.append(f"{'PASS' if worst >= 0.95 else 'MISSED'}: {name}: answer in the 5-seed grid's significance "
                     f"group in {worst:.1%} of sweeps at worst (goal >= 95%)")
    alpha = DESIGN["alpha"]
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / sweeps)
    risks = result["risks"]
    lines.append(f"{'PASS' if risks['null_any'] <= bound else 'MISSED'}: race with steps, all configurations equal: "
                 f"some configuration dropped in {risks['null_any']:.1%} of races (goal <= {bound:.1%}: --race-alpha "
                 f"{alpha:g} + 3 Monte Carlo se)")
    lines.append(f"(measured, no goal) race with steps, a true best that learns late ({LATE_BLOOMER_LAG:g} noise sd "
                 f"behind the others at both rungs): dropped in {risks['late_bloomer_dropped']:.1%} of races")
    return lines


def run_ways(sweeps: int = 500) -> list:
    from benchmarks.common import Result

    start = time.perf_counter()
    result = ways(sweeps)
    print(f"\nThe ways to the answer, {sweeps} simulated sweeps of the TSDAE grid, seed noise sd "
          f"{NOISE_SD}, rungs at {', '.join(f'{rung:.3g}' for rung in RUNGS)} of the steps, trial durations uniform "
          "0.5-1.5:\n")
    print(ways_table(result, sweeps) + "\n")
    for line in ways_goals(result, sweeps):
        print(line)
    print(f"({time.perf_counter() - start:.1f} s)")
    steps = result[WAY_SLOTS[0]]["race with steps"]
    return [Result(f"race with steps, simulated TSDAE grid: answers per grid-compute on {WAY_SLOTS[0]} slots",
                   1 / steps["compute"], 1.0, "answers", "fixed 5-seed grid")]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=500)
    parser.add_argument("--section", choices=("all", "ways"), default="all",
                        help="'ways': only the comparison of the ways to the answer")
    args = parser.parse_args()
    for result in run(args.sweeps) if args.section == "all" else run_ways(args.sweeps):
        print(result.row())
