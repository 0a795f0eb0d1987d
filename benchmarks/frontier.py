"""Compute against P(the grid's answer): every way to the answer over several settings of its aggressiveness, on
simulated TSDAE grids (no model: minutes), as a frontier per way, with the goal's verdict.

Each of `--sweeps` simulated sweeps draws one table of scores for the TSDAE paper's grid (benchmarks/racing.py: 9
deletion ratios x 3 poolings, the published 5-seed means, seed noise sd 0.4), trial durations and the scores at
any fraction of the steps (benchmarks/frontier_ways.RungValues); every setting of every way reads the same draws,
scheduled on 16 and on 64 simulated slots. For each: compute (slot-time, of the 5-seed grid's on the same
durations), wall-clock (of the grid's), P(the 5-seed grid's answer), P(an answer in the grid's significance group),
regret (the true best's mean less the answer's, points). The ways, settings and the goal: docs/performance.md,
"The frontier".

    .venv/bin/python -m benchmarks.frontier [--sweeps 500] [--plot FILE.png]"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.frontier_ways import AshaBrackets, OptunaPruned, RungValues
from benchmarks.racing import NOISE_SD, SEEDS, draw, flat, near_best, trial_durations, true_means
from sentsweep.analysis.race_schedules import make_race
from sentsweep.analysis.schedule import FixedGrid, simulate_schedule
from sentsweep.analysis.significance import best_group
from sentsweep.analysis.step_racing import fraction_text

SLOT_COUNTS = (16, 64)
GROUP_ALPHA = 0.05  # the tables' --alpha
TARGET = 0.95  # the goal: P(the grid's answer) at least this
COMPUTE_SHARE = 0.5  # the goal: sentsweep's compute at most this share of the cheapest peer setting reaching TARGET
PLOT_FILE = Path(__file__).resolve().parents[1] / "docs" / "images" / "frontier.png"  # served by the site
SENTSWEEP_WAYS = ("sentsweep grid", "sentsweep --race", "sentsweep --race-schedule steps")
RACE = dict(test="pooled t", correction="holm", initial_seeds=2, tolerance=0.0)


@dataclass(frozen=True)
class Setting:
    """One way at one setting of its aggressiveness: `make(configs, seeds, order)` gives a fresh schedule."""

    way: str
    label: str
    make: object


def grid_answer(scores: dict, seeds: int):
    return max(scores, key=lambda config: np.mean([scores[config][seed] for seed in SEEDS[:seeds]]))


def settings() -> list[Setting]:
    """Every way's settings (docs/performance.md, "The frontier")."""
    import optuna

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # WilcoxonPruner's
    third, ninth = 1 / 3, 1 / 9
    rows = [Setting("sentsweep grid", f"{count} seeds",
                    lambda configs, seeds, order, count=count: FixedGrid(
                        [trial for trial in order if trial[1] in seeds[:count]])) for count in (2, 3, 4, 5)]
    rows += [Setting("sentsweep --race", f"--race-alpha {alpha:g}",
                     lambda configs, seeds, order, alpha=alpha: make_race("async", configs, seeds, alpha=alpha,
                                                                           **RACE)) for alpha in (0.05, 0.2, 0.3)]
    earliest = (1 / 81, 1 / 27, ninth, third)
    for alpha, rungs, initial in ((0.05, (ninth, third), 2), (0.2, (ninth, third), 2), (0.3, (ninth, third), 2),
                                  (0.2, (third,), 2), (0.3, (1 / 27, ninth, third), 2), (0.7, earliest, 3),
                                  (0.3, earliest, 4), (0.5, earliest, 4), (0.7, earliest, 4)):
        label = (f"--race-alpha {alpha:g} --race-rungs {' '.join(map(fraction_text, rungs))}"
                 + (f" --race-initial-seeds {initial}" if initial != RACE["initial_seeds"] else ""))
        rows.append(Setting("sentsweep --race-schedule steps", label,
                            lambda configs, seeds, order, alpha=alpha, rungs=rungs, initial=initial: make_race(
                                "steps", configs, seeds, rungs=rungs, alpha=alpha,
                                **dict(RACE, initial_seeds=initial))))
    rows += [Setting("Ray Tune grid, seeds as an axis", "5 seeds", lambda configs, seeds, order: FixedGrid(order))]
    for factor, grace, text in ((2, 1 / 8, "1/8"), (3, ninth, "1/9"), (3, 1 / 27, "1/27"), (4, 1 / 16, "1/16"),
                                (3, third, "1/3")):
        rows.append(Setting("Ray Tune ASHA, seeds as an axis", f"reduction_factor {factor}, grace_period {text}",
                            lambda configs, seeds, order, factor=factor, grace=grace: AshaBrackets(order, grace,
                                                                                                   factor)))
    for factor, grace, brackets, text in ((3, 1 / 27, 2, "1/27"), (3, 1 / 27, 3, "1/27"), (2, 1 / 8, 3, "1/8")):
        rows.append(Setting("Ray Tune Hyperband (ASHA brackets), seeds as an axis",
                            f"brackets {brackets}, reduction_factor {factor}, grace_period {text}",
                            lambda configs, seeds, order, factor=factor, grace=grace, brackets=brackets:
                            AshaBrackets(order, grace, factor, brackets)))
    for factor, rate in ((2, 0), (3, 0), (2, 1)):
        rows.append(Setting("Optuna SuccessiveHalvingPruner, seeds as instances",
                            f"reduction_factor {factor}, min_early_stopping_rate {rate}",
                            lambda configs, seeds, order, factor=factor, rate=rate: OptunaPruned(
                                configs, seeds, optuna.pruners.SuccessiveHalvingPruner(1, factor, rate))))
    for factor in (2, 3):
        rows.append(Setting("Optuna HyperbandPruner, seeds as instances", f"reduction_factor {factor}",
                            lambda configs, seeds, order, factor=factor: OptunaPruned(
                                configs, seeds, optuna.pruners.HyperbandPruner(1, len(seeds), factor))))
    for threshold in (0.1, 0.3):
        rows.append(Setting("Optuna WilcoxonPruner, seeds as instances", f"p_threshold {threshold:g}",
                            lambda configs, seeds, order, threshold=threshold: OptunaPruned(
                                configs, seeds, optuna.pruners.WilcoxonPruner(p_threshold=threshold), "each")))
    return rows


def answer_of(schedule, scores: dict):
    if isinstance(schedule, FixedGrid):
        seeds = len({seed for _, seed in schedule._trials})
        return grid_answer(scores, seeds)
    return schedule.answer() if hasattr(schedule, "answer") else schedule.best


def simulate_sweeps(sweeps: range, rows: list[Setting], slot_counts=SLOT_COUNTS, seed: int = 6) -> dict:
    """{(way, label, slots): [(compute, wall, grid's answer, in group, regret, finds the best) per sweep]} of the
    simulated sweeps numbered `sweeps` (module docstring; sweep i draws from its own generators, so a sweep's draws
    do not depend on which others run or in which process), compute and wall-clock as shares of the 5-seed grid's
    on the same draws."""
    means = true_means()
    configs = list(means)
    order = [(config, seed_) for seed_ in SEEDS for config in configs]
    top, good = max(means.values()), near_best(means, NOISE_SD)
    runs: dict = {}
    for index in sweeps:
        rng, timing, rung_rng = (np.random.default_rng([seed, index, part]) for part in range(3))
        scores = draw(means, NOISE_SD, rng)
        durations, table = trial_durations(means, timing), flat(scores)
        rung_values = RungValues(table, means, NOISE_SD, rung_rng)
        group = set(best_group(scores, alpha=GROUP_ALPHA, correction="holm").group)
        reference = grid_answer(scores, len(SEEDS))
        for slots in slot_counts:
            grid_wall, grid_busy, _ = simulate_schedule(FixedGrid(order), durations, table, slots)
            for row in rows:
                schedule = row.make(configs, SEEDS, order)
                rungs = tuple(getattr(schedule, "rungs", ()))
                wall, busy, _ = simulate_schedule(schedule, durations, table, slots,
                                                  rung_values.table(rungs) if rungs else None)
                chosen = answer_of(schedule, scores)
                runs.setdefault((row.way, row.label, slots), []).append(
                    (busy / grid_busy, wall / grid_wall, chosen == reference, chosen in group,
                     top - means[chosen], chosen in good))
    return runs


def _simulate_chunk(sweeps: range) -> dict:
    return simulate_sweeps(sweeps, settings())


def simulate(sweeps: int, processes: int = 1) -> dict:
    """{(way, label, slots): {compute, wall, grids_answer, in_group, regret, found}}: `settings()` over `sweeps`
    simulated sweeps (`simulate_sweeps`), means over the sweeps, split over `processes` processes (the same
    figures for any number of them)."""
    from concurrent.futures import ProcessPoolExecutor

    chunks = [range(start, sweeps, processes) for start in range(processes)]
    if processes == 1:
        parts = [_simulate_chunk(chunks[0])]
    else:
        with ProcessPoolExecutor(processes) as pool:
            parts = list(pool.map(_simulate_chunk, chunks))
    runs: dict = {}
    for part in parts:
        for key, values in part.items():
            runs.setdefault(key, []).extend(values)
    names = ("compute", "wall", "grids_answer", "in_group", "regret", "found")
    return {key: dict(zip(names, np.mean(values, axis=0))) for key, values in runs.items()}


def frontier(points: list[tuple]) -> list[tuple]:
    """Of `points` (compute, probability, ...), those no other point beats: sorted by compute, each with a
    probability above every cheaper point's (a point as cheap or cheaper with at least its probability hides it)."""
    kept, best = [], -1.0
    for point in sorted(points, key=lambda point: (point[0], -point[1])):
        if point[1] > best:
            kept.append(point)
            best = point[1]
    return kept


def cheapest_reaching(rows: dict, ways, target: float = TARGET):
    """(label, figures) of the setting of `ways` with the least compute among those whose P(the grid's answer) is
    at least `target`; None when none reaches it. `rows`: {(way, label): figures}."""
    reaching = [((way, label), figures) for (way, label), figures in rows.items()
                if way in ways and figures["grids_answer"] >= target]
    return min(reaching, key=lambda item: item[1]["compute"]) if reaching else None


def goal_check(result: dict, slots: int, target: float = TARGET, share: float = COMPUTE_SHARE) -> tuple[bool, str]:
    """The goal on `slots` slots: sentsweep's cheapest setting with P(the grid's answer) >= `target` spends at most
    `share` of the cheapest peer setting's compute reaching it, and its wall-clock is at most the grid's on every
    simulated number of slots. (met, the line that says so, with the figures)."""
    at = {(way, label): figures for (way, label, count), figures in result.items() if count == slots}
    peers = {way for way, _ in at} - set(SENTSWEEP_WAYS)
    ours, theirs = cheapest_reaching(at, SENTSWEEP_WAYS, target), cheapest_reaching(at, peers, target)
    if ours is None:
        return False, f"NOT MET on {slots} slots: no sentsweep setting gives the grid's answer in >= {target:.0%}"
    (way, label), figures = ours
    walls = {count: figures["wall"] for (other, setting, count), figures in result.items()
             if (other, setting) == (way, label)}
    text = (f"on {slots} slots: sentsweep's cheapest setting at P >= {target:.0%}, {way} {label}: compute "
            f"{figures['compute']:.2f}x of the grid's, P {figures['grids_answer']:.1%}; wall-clock "
            + ", ".join(f"{wall:.2f}x on {count}" for count, wall in sorted(walls.items())) + " (goal <= 1.00x)")
    if theirs is None:
        return False, f"NOT MET {text}; no peer setting reaches {target:.0%}, so there is nothing to halve"
    (peer_way, peer_label), peer = theirs
    met = figures["compute"] <= share * peer["compute"] and all(wall <= 1.0 for wall in walls.values())
    return met, (f"{'MET' if met else 'NOT MET'} {text}; the cheapest peer setting at P >= {target:.0%}: {peer_way} "
                 f"{peer_label}, compute {peer['compute']:.2f}x (goal: sentsweep's <= {share:g} x "
                 f"{peer['compute']:.2f} = {share * peer['compute']:.2f}x)")


def table(result: dict, sweeps: int) -> str:
    """Every setting as a markdown row: compute and wall-clock on each number of slots, then P and regret on the
    first."""
    slot_counts = sorted({count for _, _, count in result})
    first = slot_counts[0]
    head = ("| way | setting | " + " | ".join(f"compute, {count} slots | wall-clock, {count} slots"
                                              for count in slot_counts)
            + " | P(the grid's answer) | P(in the grid's group) | regret (points) | finds the best |")
    lines = [f"{head}", "|---" * (6 + 2 * len(slot_counts)) + "|"]
    for (way, label, count), figures in result.items():
        if count != first:
            continue
        cells = " | ".join(f"{result[(way, label, c)]['compute']:.2f}x | {result[(way, label, c)]['wall']:.2f}x"
                           for c in slot_counts)
        lines.append(f"| {way} | {label} | {cells} | {figures['grids_answer']:.1%} | {figures['in_group']:.1%} | "
                     f"{figures['regret']:.3f} | {figures['found']:.1%} |")
    lines.append(f"\n({sweeps} simulated sweeps per row; P, regret and finds the best on {first} slots)")
    return "\n".join(lines)


def plot(result: dict, path: Path) -> None:
    """P(the grid's answer) against compute, a panel per number of slots, one curve per way (its frontier), every
    setting a point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    slot_counts = sorted({count for _, _, count in result})
    figure, panels = plt.subplots(1, len(slot_counts), figsize=(6 * len(slot_counts), 5), sharey=True)
    for axes, slots in zip(np.atleast_1d(panels), slot_counts):
        for way in dict.fromkeys(way for way, _, _ in result):
            points = [(figures["compute"], figures["grids_answer"]) for (w, _, count), figures in result.items()
                      if w == way and count == slots]
            line = frontier(points)
            drawn = axes.plot([p[0] for p in line], [100 * p[1] for p in line], marker="o", label=way)
            axes.scatter([p[0] for p in points], [100 * p[1] for p in points], color=drawn[0].get_color(), s=12)
        axes.axhline(100 * TARGET, color="grey", linestyle=":", linewidth=1)
        axes.set_xlabel(f"compute (slot-time, of the 5-seed grid's), {slots} slots")
        axes.set_title(f"{slots} slots")
    np.atleast_1d(panels)[0].set_ylabel("P(the 5-seed grid's answer), %")
    np.atleast_1d(panels)[0].legend(fontsize=7, loc="lower right")
    figure.suptitle("The ways to the answer on the simulated TSDAE grid: each way's frontier")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def cheapest_table(result: dict, target: float = TARGET) -> str:
    """Each way's cheapest setting with P(the grid's answer) >= `target` on each number of slots, as markdown."""
    slot_counts = sorted({count for _, _, count in result})
    lines = ["| way | " + " | ".join(f"{count} slots: cheapest setting at P >= {target:.0%} | compute | wall-clock"
                                     for count in slot_counts) + " |", "|---" * (1 + 3 * len(slot_counts)) + "|"]
    for way in dict.fromkeys(way for way, _, _ in result):
        cells = []
        for count in slot_counts:
            at = {(w, label): figures for (w, label, n), figures in result.items() if n == count}
            found = cheapest_reaching(at, {way}, target)
            cells.append("none reaches it | - | -" if found is None else
                         f"{found[0][1]} ({found[1]['grids_answer']:.1%}) | {found[1]['compute']:.2f}x | "
                         f"{found[1]['wall']:.2f}x")
        lines.append(f"| {way} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(sweeps: int = 500, plot_file: Path = PLOT_FILE, processes: int = 2) -> list:
    from benchmarks.common import Result

    start = time.perf_counter()
    rows = settings()
    result = simulate(sweeps, processes)
    print(f"{len(rows)} settings of {len({row.way for row in rows})} ways, {sweeps} simulated sweeps of the TSDAE "
          f"grid (27 configurations x {len(SEEDS)} seeds, seed noise sd {NOISE_SD}), each on "
          f"{' and '.join(map(str, SLOT_COUNTS))} slots, the same draws for every setting; the Monte Carlo standard "
          f"error of a P near {TARGET:.0%}: {100 * (TARGET * (1 - TARGET) / sweeps) ** 0.5:.1f} points\n")
    print(table(result, sweeps) + "\n")
    for slots in SLOT_COUNTS:
        print("Frontier on", slots, "slots (compute, P(the grid's answer)) per way: " + "; ".join(
            f"{way}: " + ", ".join(f"{c:.2f}x {p:.1%}" for c, p in frontier(
                [(f['compute'], f['grids_answer']) for (w, _, n), f in result.items() if w == way and n == slots]))
            for way in dict.fromkeys(way for way, _, _ in result)))
    print("\n" + cheapest_table(result) + "\n")
    verdicts = [goal_check(result, slots) for slots in SLOT_COUNTS]
    for _, line in verdicts:
        print(line)
    plot(result, plot_file)
    print(f"(plot: {plot_file.name}; {time.perf_counter() - start:.0f} s)")
    at = {(way, label): figures for (way, label, count), figures in result.items() if count == SLOT_COUNTS[0]}
    ours = cheapest_reaching(at, SENTSWEEP_WAYS)
    peer = cheapest_reaching(at, {way for way, _ in at} - set(SENTSWEEP_WAYS))
    if ours is None or peer is None:
        return []
    return [Result(f"frontier, simulated TSDAE grid: answers (P >= {TARGET:.0%}) per grid-compute, "
                   f"{SLOT_COUNTS[0]} slots", 1 / ours[1]["compute"], 1 / peer[1]["compute"], "answers",
                   "cheapest peer setting at P >= 95%", goal=1 / COMPUTE_SHARE)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=500)
    parser.add_argument("--plot", type=Path, default=PLOT_FILE)
    parser.add_argument("--processes", type=int, default=2, help="simulate in this many processes (same figures)")
    args = parser.parse_args()
    for row in run(args.sweeps, args.plot, args.processes):
        print(row.row())
