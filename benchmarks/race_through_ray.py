"""The headline benchmark: one experiment answered five ways through the embedded local Ray, in the same run.

The quick TSDAE deletion sweep (5 ratios x CLS and mean pooling x 5 seeds, each trial calibrated to about
`--trial-seconds` of training on one CPU) run by (a) plain Ray Tune, (b) Ray Tune with ASHAScheduler, (c)
sentsweep's 5-seed grid, (d) `--race` and (e) `--race --race-schedule steps`; for each it prints trials,
trial-seconds, wall-clock, slot utilisation, the answer and its significance group, then every schedule simulated
on 16 and 64 slots with (c)'s durations and scores, the goals (PASS or MISSED, with by how much and why) and
sentsweep's per-trial overhead by part. What each figure measures: docs/performance.md, "Through Ray".

    .venv/bin/python -m benchmarks.race_through_ray                 # about an hour on 2 cores
    .venv/bin/python -m benchmarks.race_through_ray --tiny          # every way end to end in minutes (check a change)
    .venv/bin/python -m benchmarks.race_through_ray --trial-seconds 2 --ratios 0.1 0.9 --seeds 3"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import Result, machine, timed
from sentsweep.tracking.names import WRITE_SECONDS, mlflow_metric_key

RATIOS = (0.1, 0.3, 0.5, 0.7, 0.9)
POOLINGS = ("cls", "mean")
SEEDS = 5
CPUS_PER_TRIAL = 1
EVALUATIONS = 6  # dev evaluations per trial, as --quick's 60 steps evaluated every 10
# --tiny: every way end to end at the least scale that still races (3 seeds: 2 to start, 1 more), without calibration
TINY = dict(ratios=(0.6,), poolings=("cls", "mean"), seeds=3, steps=20, evaluations=2)
SIMULATED_SLOTS = (16, 64)
# the goals: against plain Ray Tune's grid (a), the grid's answer at <= 1/3 of its compute and <= 1/2 its wall-clock
COMPUTE_GOAL, WALL_GOAL = 1 / 3, 0.5
ALPHA = 0.05  # the significance group's level, the sweep's --alpha default
# the ways, in the order they run (docs/performance.md, "Through Ray")
PLAIN, ASHA, GRID, RACE, STEPS = ("(a) plain Ray Tune, grid, seeds as an axis", "(b) plain Ray Tune ASHA, seeds as an "
                                  "axis", "(c) sentsweep, 5-seed grid", "(d) sentsweep, --race",
                                  "(e) sentsweep, --race-schedule steps")


@dataclass(frozen=True)
class Trial:
    config: str  # "noise_ratio=0.1, pooling=mean"
    seed: int
    seconds: float  # wall seconds inside the trial
    score: float | None  # best STS dev over the trial's evaluations (Spearman x 100); None: failed or stopped early
    parts: dict = field(default_factory=dict)  # seconds by part, measured inside the trial
    stopped: bool = False  # ended before its last step (a scheduler's or a race's stop)
    rungs: tuple = ()  # its best STS dev at each rung of the race over steps (a trial of the grid, for simulate)


@dataclass(frozen=True)
class Way:
    name: str
    trials: tuple[Trial, ...]
    wall_clock: float
    slots: int
    write_seconds: float = 0.0  # the driver's MLflow writes (sentsweep's mlflow_write_seconds; plain: none)

    @property
    def trial_seconds(self) -> float:
        return sum(trial.seconds for trial in self.trials)

    @property
    def utilisation(self) -> float:
        return utilisation(self.trial_seconds, self.slots, self.wall_clock)

    @property
    def stopped(self) -> int:
        return sum(trial.stopped for trial in self.trials)

    def scores(self) -> dict:
        """{config: {seed: score}} of the trials that trained to their end."""
        table: dict = {}
        for trial in self.trials:
            if trial.score is not None:
                table.setdefault(trial.config, {})[trial.seed] = trial.score
        return table


def utilisation(busy_seconds: float, slots: int, wall_clock: float) -> float:
    """Busy trial-seconds / (slots x wall-clock): the share of the slots' time that went to trials."""
    return busy_seconds / (slots * wall_clock)


def answer(scores: dict, alpha: float = ALPHA) -> tuple[str, list[str]]:
    """(the best configuration by mean over its seeds, its significance group), by
    `sentsweep.analysis.significance.best_group` (paired t over shared seeds, Holm over every pair)."""
    from sentsweep.analysis.significance import best_group

    result = best_group(scores, alpha=alpha, correction="holm")
    return result.best, result.group


def config_label(noise_ratio, pooling) -> str:
    return f"noise_ratio={float(noise_ratio)}, pooling={pooling}"


def goal_checks(plain: Way, grid: Way, races: list[Way], simulated: dict) -> list[str]:
    """The goals' verdicts for each race of `races`, PASS or MISSED with by how much and the figures that say why:
    the grid's answer, compute and wall-clock against plain Ray Tune's grid (`plain`); on the simulated slots
    (`simulated`: {slots: {way name: (wall_seconds, busy_trial_seconds, trials_run)}}, the grid's under "grid"),
    wall-clock at most the grid's and compute below it."""
    grid_best, grid_group = answer(grid.scores())
    configs = len({trial.config for trial in grid.trials})
    seeds = len({trial.seed for trial in grid.trials})
    lines = []
    for race in races:
        race_best = answer(race.scores())[0]
        if race_best == grid_best:
            lines.append(f"PASS: {race.name}: the answer is the grid's ({grid_best})")
        else:
            within = "within" if race_best in grid_group else "outside"
            lines.append(f"MISSED: {race.name} chose {race_best}, the grid {grid_best} ({race_best} is {within} the "
                         f"grid's significance group of {len(grid_group)})")
        compute = race.trial_seconds / plain.trial_seconds
        floor = len(grid_group) * seeds * grid.trial_seconds / len(grid.trials) / plain.trial_seconds
        lines.append(_verdict(f"{race.name}: compute", compute, COMPUTE_GOAL, "plain Ray Tune's", (
            f"it ran {len(race.trials)} of the grid's {len(grid.trials)} trials ({race.stopped} stopped early), "
            f"{race.trial_seconds / len(race.trials):.1f} s each against plain Ray Tune's "
            f"{plain.trial_seconds / len(plain.trials):.1f} s; the grid's significance group holds {len(grid_group)} "
            f"of its {configs} configurations, which a race that drops only configurations significantly worse "
            f"trains to their last seed: those alone are {floor:.2f}x of plain Ray Tune's compute")))
        wall = race.wall_clock / plain.wall_clock
        lines.append(_verdict(f"{race.name}: wall-clock", wall, WALL_GOAL, "plain Ray Tune's", (
            f"{compute:.0%} of the compute at {race.utilisation:.0%} slot utilisation against plain Ray Tune's "
            f"{plain.utilisation:.0%}")))
        for slots, runs in simulated.items():
            if race.name not in runs:
                continue
            (race_wall, race_busy, _), (grid_wall, grid_busy, _) = runs[race.name], runs["grid"]
            met = race_wall <= grid_wall and race_busy < grid_busy
            lines.append(f"{'PASS' if met else 'MISSED'}: {race.name} on {slots} simulated slots: wall-clock "
                         f"{race_wall / grid_wall:.2f}x of the grid's (goal <= 1.00x), compute "
                         f"{race_busy / grid_busy:.2f}x (goal < 1.00x); slot use "
                         f"{utilisation(race_busy, slots, race_wall):.0%} against the grid's "
                         f"{utilisation(grid_busy, slots, grid_wall):.0%}")
    return lines


def _verdict(what: str, ratio: float, goal: float, of: str, why: str) -> str:
    if ratio <= goal:
        return f"PASS: {what} {ratio:.2f}x of {of} (goal <= {goal:.2f}x)"
    return f"MISSED: {what} {ratio:.2f}x of {of} (goal <= {goal:.2f}x, missed by {ratio - goal:.2f}x): {why}"


def ways_table(ways: list[Way], alpha: float = ALPHA) -> str:
    """The ways as a markdown table."""
    lines = [f"| way | trials (stopped early) | trial-seconds | wall-clock (s) | slot utilisation | best configuration "
             f"(mean best STS dev) | significance group (Holm, alpha {alpha}) |", "|---|---|---|---|---|---|---|"]
    for way in ways:
        scores = way.scores()
        best, group = answer(scores, alpha)
        mean = sum(scores[best].values()) / len(scores[best])
        lines.append(f"| {way.name} | {len(way.trials)} ({way.stopped}) | {way.trial_seconds:,.0f} | "
                     f"{way.wall_clock:,.0f} | {way.utilisation:.0%} | {best} ({mean:.2f}) | {len(group)}: "
                     f"{'; '.join(group)} |")
    return "\n".join(lines)


# the parts measured inside a trial (the metrics' names) and how the overhead table calls them
PARTS = {"preparation_seconds": "preparation (model, decoder, data; sentsweep: the step-0 evaluation, cached)",
         "evaluation_seconds": "evaluations (STS dev; sentsweep: also test at a new best dev)",
         "checkpoint_seconds": "checkpoints (sentsweep: saved and handed to Ray Tune; plain: none)"}


def overhead_table(sentsweep: Way, plain: Way) -> str:
    """Mean seconds per trial by part, sentsweep's and the plain trainable's, and their difference."""
    def per_trial(way: Way) -> dict:
        count = len(way.trials)
        means = {label: sum(trial.parts.get(part, 0.0) for trial in way.trials) / count
                 for part, label in PARTS.items()}
        means["training (the rest of the trial)"] = way.trial_seconds / count - sum(means.values())
        means["outside the trials (slot-seconds not in a trial)"] = (
            way.slots * way.wall_clock - way.trial_seconds) / count
        means["MLflow writes (in the driver, while trials run: they delay starts, not steps)"] = (
            way.write_seconds / count)
        return means

    ours, reference = per_trial(sentsweep), per_trial(plain)
    lines = ["| part, mean s per trial | sentsweep | plain Ray Tune | sentsweep - plain |", "|---|---|---|---|"]
    for part in ours:
        lines.append(f"| {part} | {ours[part]:.2f} | {reference[part]:.2f} | {ours[part] - reference[part]:+.2f} |")
    return "\n".join(lines)


# --- measuring --------------------------------------------------------------------------------------------------

def calibrate_steps(model: str, trial_seconds: float) -> int:
    """Training steps for a trial of about `trial_seconds`, from two timed trials (after one that pays the
    process's one-off costs) on one thread, as a trial on one CPU of the local Ray trains."""
    import torch

    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
    from sentsweep.trainables.catalog import train
    from sentsweep.trainables.session import LocalSession

    def config(steps: int) -> dict:
        return dict(method="tsdae", model=model, corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                    test_file=str(DEMO_DIR / "sts-test.csv"), eval_format="stsb", noise_type="delete",
                    noise_ratio=0.6, pooling="mean", tie_decoder=False, lr=1e-3, batch_size=8, max_steps=steps,
                    eval_steps=max(1, steps // EVALUATIONS), max_seq_length=32, seed=0)

    threads = torch.get_num_threads()
    torch.set_num_threads(CPUS_PER_TRIAL)
    try:
        train(config(10), LocalSession())
        short, long = (timed(lambda steps=steps: train(config(steps), LocalSession())) for steps in (60, 300))
    finally:
        torch.set_num_threads(threads)
    per_step = max((long - short) / 240, 1e-4)
    return max(60, int(60 + (trial_seconds - short) / per_step))


def run_plain(name: str, model: str, steps: int, evaluations: int, ratios, poolings, seeds: int, storage: Path,
              scheduler=None) -> Way:
    """(a), or (b) with `scheduler` (Ray Tune's ASHAScheduler): Ray Tune's grid over ratio x pooling x seed of the
    plain trainable."""
    import ray
    from ray import tune

    from benchmarks.plain_tune_tsdae import tsdae_trainable
    from sentsweep.data import read_corpus, read_scored_pairs
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR

    pairs = read_scored_pairs(DEMO_DIR / "sts-dev.csv", "stsb", "dev")
    trainable = tune.with_resources(tune.with_parameters(
        tsdae_trainable, corpus=read_corpus(CORPUS_FILE),
        dev=(list(pairs.sentences1), list(pairs.sentences2), list(pairs.scores))), {"cpu": CPUS_PER_TRIAL})
    space = {"model": model, "max_steps": steps, "eval_steps": max(1, steps // evaluations),
             "noise_ratio": tune.grid_search(list(ratios)), "pooling": tune.grid_search(list(poolings)),
             "seed": tune.grid_search(list(range(seeds)))}
    tuner = tune.Tuner(trainable, param_space=space,
                       tune_config=tune.TuneConfig(metric="best_sts_dev", mode="max", scheduler=scheduler),
                       run_config=tune.RunConfig(name=storage.name, storage_path=str(storage.parent), verbose=0))
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # Ray Tune's experiment box
        results = tuner.fit()
    wall = time.perf_counter() - start
    trials = []
    for result in results:
        # a trial ASHA stopped ended on one of fit's evaluation reports, which carry the step; the last report has none
        stopped = result.metrics.get("step", steps) < steps
        trials.append(Trial(config_label(result.config["noise_ratio"], result.config["pooling"]), result.config["seed"],
                            result.metrics.get("trial_seconds", 0.0),
                            None if result.error or stopped else result.metrics.get("best_sts_dev"),
                            {part: result.metrics.get(part, 0.0) for part in PARTS}, stopped))
    return Way(name, tuple(trials), wall, slots(ray))


def slots(ray) -> int:
    return int(ray.cluster_resources()["CPU"] // CPUS_PER_TRIAL)


def sweep_argv(model: str, steps: int, evaluations: int, ratios, poolings, seeds: int, folder: Path,
               experiment: str) -> list[str]:
    return ["--quick", "--model", model, "--ratios", *map(str, ratios), "--poolings", *poolings, "--seeds",
            str(seeds), "--max-steps", str(steps), "--eval-steps", str(max(1, steps // evaluations)),
            "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}", "--experiment", experiment,
            "--output-dir", str(folder / experiment), "--cpus-per-trial", str(CPUS_PER_TRIAL)]


def run_sentsweep(name: str, argv: list[str], folder: Path, experiment: str) -> tuple[Way, dict]:
    """(c), (d) or (e): the sweep script's command line through `run_sweep`; returns the way and the race's
    settings (the sweep run's `race` tag; {} for a grid). A grid's trials carry their scores at the race over
    steps' rungs (for `simulate`), from each run's metric history."""
    import ray
    from mlflow import MlflowClient

    from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
    from sentsweep.analysis.step_racing import RUNGS
    from sentsweep.experiments.tsdae.tsdae_deletion import DEFINITION
    from sentsweep.sweep import run_sweep

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = run_sweep(DEFINITION, argv)
    wall = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"{name}: the sweep ended with exit code {code}")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    client = MlflowClient(uri)
    sweep_run = latest_sweep_run_id(uri, experiment)
    data = client.get_run(sweep_run).data
    race = json.loads(data.tags.get("race", "{}"))
    trials = []
    for _, row in fetch_trial_runs(uri, experiment, sweep_run).iterrows():
        # a run a race stopped at a rung, or a seed it ran ahead and did not count: compute, not an answer
        stopped = row["status"] != "FINISHED" or not pd_isna(row.get("race_stopped_at_step"))
        history = [] if race else sorted((metric.step, metric.value) for metric in
                                         client.get_metric_history(row["run_id"], "best_sts_dev"))
        total = row["metrics.total_steps"]
        rungs = tuple(next(value for step, value in history if step >= rung * total) for rung in RUNGS) if history \
            else ()
        logged = {part: float(row.get(f"metrics.{mlflow_metric_key(part)}", 0.0)) for part in PARTS}
        trials.append(Trial(config_label(row["params.noise_ratio"], row["params.pooling"]), int(row["seed"]),
                            float(row[f"metrics.{mlflow_metric_key('wall_seconds')}"]),
                            None if stopped else float(row["metrics.best_sts_dev"]), logged, stopped, rungs))
    return Way(name, tuple(trials), wall, slots(ray), data.metrics[mlflow_metric_key(WRITE_SECONDS)]), race


def pd_isna(value) -> bool:
    return value is None or value != value


def simulate(grid: Way, race_settings: dict, slot_counts, races: dict | None = None) -> dict:
    """{slots: {schedule: (wall_seconds, busy_trial_seconds, trials_run)}}: the grid and the race of each
    --race-schedule ("async race", "steps race", "async-per-level race", "rounds race"; or `races`, {name:
    schedule}) on the race's settings, scheduled on `slot_counts` slots with the grid's measured durations, scores
    and scores at the rungs (`sentsweep.analysis.schedule.simulate_schedule`; without the rungs' scores, no steps
    race)."""
    from sentsweep.analysis.race_schedules import RACE_SCHEDULES, make_race
    from sentsweep.analysis.racing import RaceBook
    from sentsweep.analysis.schedule import FixedGrid, simulate_schedule

    durations = {(trial.config, trial.seed): trial.seconds for trial in grid.trials}
    scores = {(trial.config, trial.seed): trial.score for trial in grid.trials}
    rungs = {(trial.config, trial.seed): list(trial.rungs) for trial in grid.trials}
    configs = list(dict.fromkeys(trial.config for trial in grid.trials))
    seeds = race_settings["seeds"]
    # the tag's settings a race takes (the tag names the schedule too; the steps race's rungs are its own)
    taken = set(inspect.signature(RaceBook.__init__).parameters) - {"self", "configs", "seeds"}
    settings = {name: value for name, value in race_settings.items() if name in taken}
    with_rungs = all(rungs.values())
    races = races or {f"{schedule} race": schedule for schedule in RACE_SCHEDULES
                      if with_rungs or schedule != "steps"}
    schedules = {"grid": lambda: FixedGrid([(config, seed) for seed in seeds for config in configs])}
    schedules |= {name: lambda schedule=schedule: make_race(schedule, configs, seeds, **settings)
                  for name, schedule in races.items()}
    return {slots: {name: simulate_schedule(make(), durations, scores, slots, rungs if with_rungs else None)
                    for name, make in schedules.items()} for slots in slot_counts}


def run(trial_seconds: float = 20.0, ratios=RATIOS, poolings=POOLINGS, seeds: int = SEEDS, tiny: bool = False
        ) -> list[Result]:
    """Every way, then the tables and the goals (docs/performance.md, "Through Ray"); `tiny`: TINY's grid and steps, no
    calibration (every way end to end, in minutes)."""
    import ray
    from ray.tune.schedulers import ASHAScheduler

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.models import build_tiny_model
    from sentsweep.sweep.launch.launcher import read_corpus_pairs_text

    evaluations = TINY["evaluations"] if tiny else EVALUATIONS
    if tiny:
        ratios, poolings, seeds = TINY["ratios"], TINY["poolings"], TINY["seeds"]
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        model = str(build_tiny_model(folder / "tiny", read_corpus(CORPUS_FILE) + read_corpus_pairs_text()))
        steps = TINY["steps"] if tiny else calibrate_steps(model, trial_seconds)
        print(f"{len(ratios)} ratios x {len(poolings)} poolings x {seeds} seeds, {steps} steps per trial "
              f"({'--tiny' if tiny else f'calibrated to ~{trial_seconds:g} s on one thread'}), {evaluations} "
              f"evaluations, {CPUS_PER_TRIAL} CPU per trial", flush=True)
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        ways = []
        try:
            for name, scheduler in ((PLAIN, None), (ASHA, ASHAScheduler())):
                ways.append(run_plain(name, model, steps, evaluations, ratios, poolings, seeds,
                                      folder / name[1], scheduler))
                print(f"{name}: {ways[-1].wall_clock:.0f} s", flush=True)
            settings = {}
            for name, extra in ((GRID, []), (RACE, ["--race"]), (STEPS, ["--race", "--race-schedule", "steps"])):
                experiment = name[1]
                argv = sweep_argv(model, steps, evaluations, ratios, poolings, seeds, folder, experiment) + extra
                way, race = run_sentsweep(name, argv, folder, experiment)
                ways.append(way)
                settings = settings or race
                print(f"{name}: {way.wall_clock:.0f} s" + (f"; race settings {race}" if race else ""), flush=True)
        finally:
            ray.shutdown()
    plain, _, grid, race, steps_race = ways
    print(f"\nMachine: {machine()}; {grid.slots} slots of {CPUS_PER_TRIAL} CPU\n")
    print(ways_table(ways) + "\n")
    simulated = simulate(grid, settings, SIMULATED_SLOTS)
    print("Simulated on more slots with (c)'s trial durations, scores and scores at the rungs (utilisation; "
          "wall-clock; trials started):\n")
    names = list(simulated[SIMULATED_SLOTS[0]])
    print("| slots | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for count, runs in simulated.items():
        print(f"| {count} | " + " | ".join(f"{utilisation(busy, count, wall):.0%}; {wall:,.0f} s; {trials}"
                                           for wall, busy, trials in runs.values()) + " |")
    print("\nGoals ((d) and (e) against (a), plain Ray Tune's grid, and against (c), sentsweep's grid, on the "
          "simulated slots):")
    for line in goal_checks(plain, grid, [race, steps_race], {
            count: {"grid": runs["grid"], RACE: runs["async race"], STEPS: runs["steps race"]}
            for count, runs in simulated.items()}):
        print(line)
    print("\nPer-trial overhead of sentsweep over the plain trainable, at equal steps ((c)'s and (a)'s trials):\n")
    print(overhead_table(grid, plain))
    return [Result("race with steps through Ray: answers per trial-hour", 3600 / steps_race.trial_seconds,
                   3600 / plain.trial_seconds, "answers/h", "plain Ray Tune's grid", goal=1 / COMPUTE_GOAL),
            Result("race with steps through Ray: answers per wall-clock hour", 3600 / steps_race.wall_clock,
                   3600 / plain.wall_clock, "answers/h", "plain Ray Tune's grid", goal=1 / WALL_GOAL),
            Result("sentsweep grid against plain Ray Tune: trials per hour", 3600 * len(grid.trials) / grid.wall_clock,
                   3600 * len(plain.trials) / plain.wall_clock, "trials/h", "plain Ray Tune grid")]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trial-seconds", type=float, default=20.0)
    parser.add_argument("--ratios", type=float, nargs="+", default=list(RATIOS))
    parser.add_argument("--poolings", nargs="+", default=list(POOLINGS))
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--tiny", action="store_true", help=f"every way end to end at the least scale that races "
                        f"({TINY['ratios']} x {TINY['poolings']} x {TINY['seeds']} seeds, {TINY['steps']} steps)")
    args = parser.parse_args()
    for result in run(args.trial_seconds, args.ratios, args.poolings, args.seeds, args.tiny):
        print(result.row())
