"""A stage raced over its seeds (--race): the race as one Ray Tune run, and what its table keeps of it (the race's
status, the cells its decisions counted, the trials a rung stopped)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sentsweep.analysis.race_schedules import make_race
from sentsweep.analysis.runs import RACE_NOT_COUNTED_TAG, RACE_STOPPED_TAG, values_at_race_stops
from sentsweep.sweep.compute.cluster import cluster_nodes, trial_slots
from sentsweep.sweep.execution.race_decisions import SPLIT_COLUMNS
from sentsweep.sweep.execution.stage_tune import tune_stage
from sentsweep.tracking.callback import config_hash


@dataclass
class RaceOutcome:
    """What a stage's race decided, as its table and configuration runs show it."""

    status: dict = field(default_factory=dict)  # {configuration: ConfigStatus}
    hashes: dict = field(default_factory=dict)  # {configuration: config hash}
    counted: set = field(default_factory=set)  # the (config hash, seed) cells its decisions counted
    stopped: dict = field(default_factory=dict)  # the trials a rung stopped: {Ray trial id: step}

    def counted_runs(self, tracker, split):
        """The runs of a race's cells that its decisions counted, of `split` (the stage's runs with their
        `race_split` columns, as `decided_runs` reads them too); a run beyond them (a seed run ahead for a
        configuration its level then dropped: `sentsweep.analysis.async_racing`; finished, or stopped for the
        race) is tagged and left out of the table, which so depends on the race's results alone, not on the order
        they came in. The runs a rung stopped (a race over steps) are tagged with the step the race counted, and
        read at it (`sentsweep.analysis.runs.values_at_race_stops`)."""
        for trial_id in split[~split["counted"] & split["status"].isin(["FINISHED", "KILLED"])
                              & split["ray_trial_id"].notna()]["ray_trial_id"]:
            tracker.writer.submit({"op": "tag", "trial": trial_id, "key": RACE_NOT_COUNTED_TAG, "value": (
                "a seed run ahead for a configuration the race dropped on the seeds before, or after its end")})
        stopped = split["stopped_by_race"]
        for trial_id, step in zip(split["ray_trial_id"][stopped.notna()], stopped.dropna()):
            tracker.writer.submit({"op": "tag", "trial": trial_id, "key": RACE_STOPPED_TAG, "value": str(int(step))})
        runs = split.assign(race_stopped_at_step=stopped.where(stopped.notna(), split["race_stopped_at_step"]))
        return tracker.writer.call("reading the metric histories of the runs the race stopped", values_at_race_stops,
                                   tracker.writer.client, runs[runs["counted"]].drop(columns=SPLIT_COLUMNS))


def race_stage(stage, run_name: str, constants: dict, configs: list[dict]) -> tuple[list, RaceOutcome]:
    """Race `stage`'s configurations (a `sentsweep.sweep.execution.stage_run.StageRun`) over the seeds as one Ray Tune
    run (`sentsweep.sweep.search.race_search`; restored on --resume, so no trial runs twice), the race --race-schedule
    names (`make_race`). Returns the trials' results and what the race decided."""
    from ray import tune

    from sentsweep.sweep.search.race_search import RaceScheduler, RaceSearcher  # lazy: ray

    sweep = stage.sweep
    by_label = {", ".join(f"{name}={value}" for name, value in config.items() if name in stage.axes): config
                for config in configs}
    settings = sweep.race_settings()
    race = make_race(sweep.options.race_schedule, list(by_label), settings.pop("seeds"), **settings)
    name = f"{run_name}-race"
    # at most as many trials running as the cluster runs at once, so that a trial is chosen when a slot frees,
    # on the results in by then; an autoscaling cluster's room is not known: Ray Tune keeps one trial waiting
    slots = None if sweep.options.autoscaling else trial_slots(sweep.options.cpus_per_trial, sweep.gpus_per_trial,
                                                               cluster_nodes())
    searcher = RaceSearcher(name, race, by_label, sweep.definition.selection_metric, slots)
    bound = min(len(by_label) * len(sweep.seeds), sweep.options.race_budget or math.inf)
    results = tune_stage(stage, name, dict(constants), tune.TuneConfig(
        search_alg=searcher, scheduler=RaceScheduler(name, slots), num_samples=-1, reuse_actors=True), bound)
    race = searcher.race  # (restored with a resumed run)
    hashes = {label: config_hash(constants | config) for label, config in by_label.items()}
    outcome = RaceOutcome(
        status=race.status(), hashes=hashes,
        counted={(hashes[label], str(seed)) for label, seeds in race.counted_seeds().items() for seed in seeds},
        stopped={searcher.trial_ids[trial]: step  # (a race over steps: the trials a rung stopped)
                 for trial, step in getattr(race, "stopped_at", dict)().items()})
    return list(results), outcome
