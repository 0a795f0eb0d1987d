"""The headline benchmark: one experiment answered three ways through the embedded local Ray, in the same run.

The experiment is the quick TSDAE deletion sweep (sweeps/tsdae_deletion.py --quick: the tiny BERT, the demo corpus
and STS dev) on 5 deletion ratios x 2 poolings x 5 seeds, each trial calibrated to about `--trial-seconds` of
training (default 20: tens of seconds, so that Ray's per-trial costs weigh what they weigh in a real sweep):

(a) plain Ray Tune as its users write it (benchmarks/plain_tune_tsdae.py: sentence-transformers' TSDAE, its STS
    evaluator, `tune.report`; Ray Tune's grid with the seed as an axis), no sentsweep code in the trainable;
(b) sentsweep's 5-seed grid, the sweep script's own command line through `run_sweep`, preparation cache on;
(c) the same sweep with `--race`, whichever race is sentsweep's default when it runs (printed: its
    --race-schedule, and the Ray Tune runs it took: one, sentsweep.sweep.race_search).

Each trial runs on one CPU (a slot; the local Ray has one per core). Reported for each way: trials run;
trial-seconds (the sum of the trials' wall seconds, measured inside each trial: sentsweep's `wall_seconds`, the
plain trainable's own clock); wall-clock to the answer (the Tune run or the sweep, Ray already up); slot
utilisation (trial-seconds / (slots x wall-clock)); the answer: the best configuration by its mean best-STS-dev
over the seeds it ran, and the significance group (`sentsweep.analysis.significance.best_group`: the
configurations not significantly worse than the best, paired t over shared seeds, Holm at --alpha), for (a) too.

Then the same schedules on 16 and 64 slots, simulated with (b)'s measured trial durations and scores
(`simulate_schedule`): the grid, and the race of each --race-schedule on the settings (c) ran with. The goals
(issue 31, item 3): (c) reaches (b)'s best configuration at <= 50% of (b)'s trial-seconds and <= 60% of its
wall-clock; the race's utilisation >= 90% of the grid's on the simulated 16 and 64 slots. A missed goal is
printed with by how much and the figures that say why. Ratios only, every figure from this run.

Per-trial overhead of sentsweep over the plain trainable at equal steps (item 4), by part, means per trial from
(b)'s and (a)'s trials: preparation (model, data; sentsweep's step-0 evaluation, cached), evaluations,
checkpoints (sentsweep's `evaluation_seconds` and `checkpoint_seconds`, sentsweep.trainables.loop), training (the
rest of the trial), outside the trials (slot-seconds not in a trial, per trial: actor start-up and imports,
scheduling, the driver's MLflow writes where they hold it up, and the last trials' tail), and the driver's MLflow
writes (`mlflow_write_seconds` of the sweep's run, per trial: synchronous in Ray Tune's loop, they overlap the
running trials and delay the next starts).

    .venv/bin/python -m benchmarks.race_through_ray                       # about 45 minutes on 2 cores
    .venv/bin/python -m benchmarks.race_through_ray --trial-seconds 2 --ratios 0.1 0.9 --seeds 3   # minutes
"""

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

RATIOS = (0.1, 0.3, 0.5, 0.7, 0.9)
POOLINGS = ("mean", "max")
SEEDS = 5
CPUS_PER_TRIAL = 1
EVALUATIONS = 6  # dev evaluations per trial, as --quick's 60 steps evaluated every 10
SIMULATED_SLOTS = (16, 64)
COMPUTE_GOAL, WALL_GOAL, UTILISATION_GOAL = 0.5, 0.6, 0.9
ALPHA = 0.05  # the significance group's level, the sweep's --alpha default


@dataclass(frozen=True)
class Trial:
    config: str  # "noise_ratio=0.1, pooling=mean"
    seed: int
    seconds: float  # wall seconds inside the trial
    score: float | None  # best STS dev over the trial's evaluations (Spearman x 100); None: failed
    parts: dict = field(default_factory=dict)  # seconds by part, measured inside the trial


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

    def scores(self) -> dict:
        """{config: {seed: score}} of the trials that finished."""
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


def goal_checks(grid: Way, race: Way, simulated: dict, race_runs: int = 1) -> list[str]:
    """The goals' verdicts, PASS or MISSED with by how much and the figures that say why. `simulated` is
    {slots: {schedule name: (wall_seconds, busy_trial_seconds, trials_run)}} with a "grid" entry and the race's
    under "race"; `race_runs`: the Ray Tune runs the race took."""
    grid_best, grid_group = answer(grid.scores())
    race_best = answer(race.scores())[0]
    lines = []
    if race_best == grid_best:
        lines.append(f"PASS: the race's answer is the grid's ({grid_best})")
    else:
        within = "within" if race_best in grid_group else "outside"
        lines.append(f"MISSED: the race chose {race_best}, the grid {grid_best} ({race_best} is {within} the grid's "
                     f"significance group of {len(grid_group)})")
    compute = race.trial_seconds / grid.trial_seconds
    trials = len(race.trials) / len(grid.trials)
    configs = len({trial.config for trial in grid.trials})
    lines.append(_verdict("compute", compute, COMPUTE_GOAL, f"the race ran {len(race.trials)} of the grid's "
                          f"{len(grid.trials)} trials ({trials:.0%}), {race.trial_seconds / len(race.trials):.1f} s "
                          f"each against the grid's {grid.trial_seconds / len(grid.trials):.1f} s; the grid's "
                          f"significance group holds {len(grid_group)} of its {configs} configurations, which a race "
                          f"that drops only configurations significantly worse keeps to their last seeds"))
    wall = race.wall_clock / grid.wall_clock
    runs = (f"; the race took {race_runs} Ray Tune runs, each waiting for its slowest trial and starting Ray Tune "
            f"again" if race_runs > 1 else "")
    lines.append(_verdict("wall-clock", wall, WALL_GOAL, f"{compute:.0%} of the compute at {race.utilisation:.0%} "
                          f"slot utilisation against the grid's {grid.utilisation:.0%}{runs}"))
    for slots, runs in simulated.items():
        grid_use, race_use = (utilisation(runs[name][1], slots, runs[name][0]) for name in ("grid", "race"))
        ratio = race_use / grid_use
        lines.append(_verdict(f"utilisation on {slots} simulated slots", ratio, UTILISATION_GOAL,
                              f"race {race_use:.0%}, grid {grid_use:.0%}; {runs['race'][2]} race trials for "
                              f"{slots} slots", higher_is_better=True))
    return lines


def _verdict(what: str, ratio: float, goal: float, why: str, higher_is_better: bool = False) -> str:
    met = ratio >= goal if higher_is_better else ratio <= goal
    bound = ">=" if higher_is_better else "<="
    if met:
        return f"PASS: {what} {ratio:.2f}x of the grid's (goal {bound} {goal:.2f}x)"
    return (f"MISSED: {what} {ratio:.2f}x of the grid's (goal {bound} {goal:.2f}x, missed by "
            f"{abs(ratio - goal):.2f}x): {why}")


def ways_table(ways: list[Way], alpha: float = ALPHA) -> str:
    """The three ways as a markdown table."""
    lines = [f"| way | trials | trial-seconds | wall-clock (s) | slot utilisation | best configuration "
             f"(mean best STS dev) | significance group (Holm, alpha {alpha}) |", "|---|---|---|---|---|---|---|"]
    for way in ways:
        scores = way.scores()
        best, group = answer(scores, alpha)
        mean = sum(scores[best].values()) / len(scores[best])
        lines.append(f"| {way.name} | {len(way.trials)} | {way.trial_seconds:,.0f} | {way.wall_clock:,.0f} | "
                     f"{way.utilisation:.0%} | {best} ({mean:.2f}) | {len(group)}: {'; '.join(group)} |")
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


def run_plain(model: str, steps: int, ratios, poolings, seeds: int, storage: Path) -> Way:
    """(a): Ray Tune's grid over ratio x pooling x seed of the plain trainable."""
    import ray
    from ray import tune

    from benchmarks.plain_tune_tsdae import tsdae_trainable
    from sentsweep.data import read_corpus, read_scored_pairs
    from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR

    pairs = read_scored_pairs(DEMO_DIR / "sts-dev.csv", "stsb", "dev")
    trainable = tune.with_resources(tune.with_parameters(
        tsdae_trainable, corpus=read_corpus(CORPUS_FILE),
        dev=(list(pairs.sentences1), list(pairs.sentences2), list(pairs.scores))), {"cpu": CPUS_PER_TRIAL})
    space = {"model": model, "max_steps": steps, "eval_steps": max(1, steps // EVALUATIONS),
             "noise_ratio": tune.grid_search(list(ratios)), "pooling": tune.grid_search(list(poolings)),
             "seed": tune.grid_search(list(range(seeds)))}
    tuner = tune.Tuner(trainable, param_space=space, tune_config=tune.TuneConfig(metric="best_sts_dev", mode="max"),
                       run_config=tune.RunConfig(name="plain", storage_path=str(storage), verbose=0))
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # Ray Tune's experiment box
        results = tuner.fit()
    wall = time.perf_counter() - start
    trials = tuple(Trial(config_label(r.config["noise_ratio"], r.config["pooling"]), r.config["seed"],
                         r.metrics.get("trial_seconds", 0.0), None if r.error else r.metrics.get("best_sts_dev"),
                         {part: r.metrics.get(part, 0.0) for part in PARTS}) for r in results)
    return Way(f"(a) plain Ray Tune, {seeds}-seed grid", trials, wall, slots(ray))


def slots(ray) -> int:
    return int(ray.cluster_resources()["CPU"] // CPUS_PER_TRIAL)


def sweep_argv(model: str, steps: int, ratios, poolings, seeds: int, folder: Path, experiment: str) -> list[str]:
    return ["--quick", "--model", model, "--ratios", *map(str, ratios), "--poolings", *poolings, "--seeds",
            str(seeds), "--max-steps", str(steps), "--eval-steps", str(max(1, steps // EVALUATIONS)),
            "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}", "--experiment", experiment,
            "--output-dir", str(folder / experiment), "--cpus-per-trial", str(CPUS_PER_TRIAL)]


def run_sentsweep(name: str, argv: list[str], folder: Path, experiment: str) -> tuple[Way, dict, int]:
    """(b) or (c): the sweep script's command line through `run_sweep`; returns the way, the race's settings
    (the sweep run's `race` tag; {} for a grid) and the number of Ray Tune runs the sweep took."""
    import ray

    from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
    from sentsweep.experiments.tsdae_deletion import DEFINITION
    from sentsweep.sweep import run_sweep

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = run_sweep(DEFINITION, argv)
    wall = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"{name}: the sweep ended with exit code {code}")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    sweep_run = latest_sweep_run_id(uri, experiment)
    runs = fetch_trial_runs(uri, experiment, sweep_run)
    trials = tuple(Trial(config_label(row["params.noise_ratio"], row["params.pooling"]), int(row["seed"]),
                         float(row["metrics.wall_seconds"]),
                         float(row["metrics.best_sts_dev"]) if row["status"] == "FINISHED" else None,
                         {part: float(row.get(f"metrics.{part}", 0.0)) for part in PARTS})
                   for _, row in runs.iterrows())
    from mlflow import MlflowClient

    data = MlflowClient(uri).get_run(sweep_run).data
    race = json.loads(data.tags.get("race", "{}"))
    storage = folder / experiment / "ray"
    tune_runs = sum(1 for path in storage.iterdir() if path.is_dir() and path.name != "cache")
    return Way(name, trials, wall, slots(ray), data.metrics["mlflow_write_seconds"]), race, tune_runs


def simulate(grid: Way, race_settings: dict, slot_counts) -> dict:
    """{slots: {schedule: (wall_seconds, busy_trial_seconds, trials_run)}}: the grid and the race of each
    --race-schedule ("async race", "async-per-level race", "rounds race") on the race's settings, scheduled on
    `slot_counts` slots with the grid's measured durations and scores
    (`sentsweep.analysis.schedule.simulate_schedule`)."""
    from sentsweep.analysis.race_schedules import RACE_SCHEDULES, make_race
    from sentsweep.analysis.racing import RaceBook
    from sentsweep.analysis.schedule import FixedGrid, simulate_schedule

    durations = {(trial.config, trial.seed): trial.seconds for trial in grid.trials}
    scores = {(trial.config, trial.seed): trial.score for trial in grid.trials}
    configs = list(dict.fromkeys(trial.config for trial in grid.trials))
    seeds = race_settings["seeds"]
    # the tag's settings a race takes (the tag names the schedule too)
    taken = set(inspect.signature(RaceBook.__init__).parameters) - {"self", "configs", "seeds"}
    settings = {name: value for name, value in race_settings.items() if name in taken}
    schedules = {"grid": lambda: FixedGrid([(config, seed) for seed in seeds for config in configs])}
    schedules |= {f"{schedule} race": lambda schedule=schedule: make_race(schedule, configs, seeds, **settings)
                  for schedule in RACE_SCHEDULES}
    return {slots: {name: simulate_schedule(make(), durations, scores, slots) for name, make in schedules.items()}
            for slots in slot_counts}


def run(trial_seconds: float = 20.0, ratios=RATIOS, poolings=POOLINGS, seeds: int = SEEDS) -> list[Result]:
    import ray

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.models import build_tiny_model
    from sentsweep.sweep.launcher import read_corpus_pairs_text

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        model = str(build_tiny_model(folder / "tiny", read_corpus(CORPUS_FILE) + read_corpus_pairs_text()))
        steps = calibrate_steps(model, trial_seconds)
        print(f"{len(ratios)} ratios x {len(poolings)} poolings x {seeds} seeds, {steps} steps per trial "
              f"(calibrated to ~{trial_seconds:g} s on one thread), {CPUS_PER_TRIAL} CPU per trial", flush=True)
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        try:
            plain = run_plain(model, steps, ratios, poolings, seeds, folder / "plain")
            print(f"(a) done: {plain.wall_clock:.0f} s", flush=True)
            argv = sweep_argv(model, steps, ratios, poolings, seeds, folder, "grid")
            grid, _, _ = run_sentsweep(f"(b) sentsweep, {seeds}-seed grid", argv, folder, "grid")
            print(f"(b) done: {grid.wall_clock:.0f} s", flush=True)
            argv = sweep_argv(model, steps, ratios, poolings, seeds, folder, "race") + ["--race"]
            race, settings, tune_runs = run_sentsweep("(c) sentsweep, --race", argv, folder, "race")
        finally:
            ray.shutdown()
    print(f"(c) ran its race (--race-schedule {settings['schedule']}) as {tune_runs} Ray Tune run(s); "
          f"race settings {settings}\n")
    print(f"Machine: {machine()}; {grid.slots} slots of {CPUS_PER_TRIAL} CPU\n")
    print(ways_table([plain, grid, race]) + "\n")
    simulated = simulate(grid, settings, SIMULATED_SLOTS)
    print("Simulated on more slots with (b)'s trial durations and scores (utilisation; wall-clock; trials):\n")
    print("| slots | " + " | ".join(simulated[SIMULATED_SLOTS[0]]) + " |\n|---|" + "---|" * len(
        simulated[SIMULATED_SLOTS[0]]))
    for count, runs in simulated.items():
        print(f"| {count} | " + " | ".join(f"{utilisation(busy, count, wall):.0%}; {wall:,.0f} s; {trials}"
                                           for wall, busy, trials in runs.values()) + " |")
    ran = f"{settings['schedule']} race"
    print(f"\nGoals ((c) against (b); the simulated race is the {ran}, the one (c) ran):")
    for line in goal_checks(grid, race, {count: {"grid": runs["grid"], "race": runs[ran]}
                                         for count, runs in simulated.items()}, tune_runs):
        print(line)
    print("\nPer-trial overhead of sentsweep over the plain trainable, at equal steps ((b)'s and (a)'s trials):\n")
    print(overhead_table(grid, plain))
    return [Result("race through Ray: answers per trial-hour", 3600 / race.trial_seconds, 3600 / grid.trial_seconds,
                   "answers/h", "sentsweep's grid", goal=1 / COMPUTE_GOAL),
            Result("race through Ray: answers per wall-clock hour", 3600 / race.wall_clock, 3600 / grid.wall_clock,
                   "answers/h", "sentsweep's grid", goal=1 / WALL_GOAL),
            Result("sentsweep grid against plain Ray Tune: trials per hour", 3600 * len(grid.trials) / grid.wall_clock,
                   3600 * len(plain.trials) / plain.wall_clock, "trials/h", "plain Ray Tune grid")]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trial-seconds", type=float, default=20.0)
    parser.add_argument("--ratios", type=float, nargs="+", default=list(RATIOS))
    parser.add_argument("--poolings", nargs="+", default=list(POOLINGS))
    parser.add_argument("--seeds", type=int, default=SEEDS)
    args = parser.parse_args()
    for result in run(args.trial_seconds, args.ratios, args.poolings, args.seeds):
        print(result.row())
