"""`sentsweep models`: register a sweep's best models in the MLflow Model Registry, and export a model to a folder.

    sentsweep models register --experiment nm_weight [--sweep-run ID] [--stage NAME] [--name NAME] [--versions seeds]
    sentsweep models export models:/nm_weight/1 my_model/      # then SentenceTransformer("my_model")

`register` picks the sweep's best configuration by the rule of its tables: the mean over seeds of the selection
metric the sweep was run with (on dev), per row of the stage's table (its swept params). It registers the
models that configuration's trials logged (`--keep-models`, a sweep option): one version per seed, or only
the best seed's (`--versions best-seed`), each tagged with the table's cells of that configuration
(`table.<metric>`: "mean ± std", `table.<metric>.n`), its own seed's scores and its sweep, stage and config.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import pandas as pd

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id, runs_of_row
from sentsweep.analysis.tables import build_table
from sentsweep.errors import InputError
from sentsweep.tracking.models import LOGGED_MODEL_NAME, export_model, fluent_tracking
from sentsweep.tracking.store import resolve_tracking_uri

# Params that differ between the trials of one configuration and so never split it into table rows: the seed,
# and in a chained stage each seed's own start model.
PER_SEED_PARAMS = {"seed", "model"}


@dataclass
class RegisteredVersion:
    name: str
    version: str
    run_id: str
    seed: int
    tags: dict


def stage_runs(runs: pd.DataFrame, stage: str | None) -> pd.DataFrame:
    """The runs of one stage: `stage`, or the only one; an `InputError` naming the stages when it is ambiguous."""
    stages = sorted(runs["params.stage"].dropna().unique()) if "params.stage" in runs else []
    if stage is None and len(stages) > 1:
        raise InputError(f"the sweep has stages {', '.join(map(repr, stages))}; choose one with --stage")
    if stage is not None:
        if stage not in stages:
            raise InputError(f"the sweep has no stage {stage!r} (stages: {', '.join(map(repr, stages)) or 'none'})")
        return runs[runs["params.stage"] == stage]
    return runs


def swept_params(runs: pd.DataFrame) -> list[str]:
    """The params that take more than one value among the finished runs, other than the per-seed ones: the
    stage's table rows."""
    finished = runs[runs["status"] == "FINISHED"]
    chained = "parent_model_run_id" in finished and finished["parent_model_run_id"].notna().any()
    per_seed = PER_SEED_PARAMS if chained else PER_SEED_PARAMS - {"model"}
    names = [column[len("params."):] for column in finished.columns if column.startswith("params.")]
    return [name for name in sorted(names)
            if name not in per_seed and name != "stage" and finished[f"params.{name}"].nunique(dropna=False) > 1]


def register_best(tracking_uri: str, experiment: str, sweep_run_id: str | None = None, stage: str | None = None,
                  name: str | None = None, versions: str = "seeds") -> list[RegisteredVersion]:
    """Register the models of the sweep's best configuration (see the module docstring); returns the versions."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    sweep_run_id = sweep_run_id or latest_sweep_run_id(tracking_uri, experiment)
    parent = client.get_run(sweep_run_id)
    metric = parent.data.tags.get("selection_metric", "best_sts_dev")
    table_metrics = json.loads(parent.data.tags.get("table_metrics", json.dumps([metric])))
    runs = stage_runs(fetch_trial_runs(tracking_uri, experiment, sweep_run_id), stage)
    if not (runs["status"] == "FINISHED").any():
        raise InputError(f"sweep run {sweep_run_id} has no finished trial{f' in stage {stage!r}' if stage else ''}")
    rows = swept_params(runs) or ["method"]
    metrics = [m for m in dict.fromkeys(table_metrics + [metric]) if f"metrics.{m}" in runs]
    table = build_table(runs, rows, metrics)
    best = table.best[metric]
    metrics = [m for m in metrics if table.cells[(best, m)].n]  # a metric the stage's trials do not report: no tag
    finished = runs[runs["status"] == "FINISHED"]
    chosen = runs_of_row(finished, rows, best)
    with_model = chosen[chosen["logged_model_id"].notna()] if "logged_model_id" in chosen else chosen.iloc[:0]
    label = ", ".join(f"{row}={value}" for row, value in zip(rows, best))
    if with_model.empty:
        raise InputError(f"the best configuration ({label}) of sweep run {sweep_run_id} has no logged model: was "
                         "the sweep run with --keep-models none?")
    if versions == "best-seed":
        with_model = with_model.loc[[with_model[f"metrics.{metric}"].idxmax()]]
    name = name or experiment
    configuration_tags = {
        "sweep": parent.data.tags.get("sweep", experiment), "sweep_run_id": sweep_run_id, "stage": stage or "",
        "configuration": label, "selection_metric": metric,
        **{f"table.{m}": table.cells[(best, m)].mean_std_text() for m in metrics},
        **{f"table.{m}.n": str(table.cells[(best, m)].n) for m in metrics},
    }
    if not client.search_registered_models(f"name = '{name}'"):
        client.create_registered_model(name, description=f"best configuration of sweep {experiment} by {metric}")
    registered = []
    with fluent_tracking(tracking_uri):  # the store resolves the version's source through MLflow's current URI
        for _, run in with_model.sort_values("seed").iterrows():
            tags = configuration_tags | {"seed": str(run["seed"]), "config_hash": str(run["config_hash"])} | {
                f"seed.{m}": f"{run[f'metrics.{m}']:.4f}" for m in metrics if not pd.isna(run[f"metrics.{m}"])}
            version = client.create_model_version(name, source=f"models:/{run['logged_model_id']}",
                                                  run_id=run["run_id"], tags=tags, model_id=run["logged_model_id"])
            registered.append(RegisteredVersion(name, version.version, run["run_id"], int(run["seed"]), tags))
    return registered


def parse_args(argv=None, prog: str = "sentsweep models") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    register = commands.add_parser("register", help="register the best configuration's models of a sweep")
    register.add_argument("--experiment", required=True, help="the sweep's MLflow experiment")
    register.add_argument("--sweep-run", help="the sweep's parent run id (default: the latest sweep)")
    register.add_argument("--stage", help="the stage whose best configuration is registered (multi-stage sweeps)")
    register.add_argument("--name", help="registered model name (default: the experiment's)")
    register.add_argument("--versions", choices=["seeds", "best-seed"], default="seeds",
                          help="one version per seed, or only the best seed's on the selection metric")
    export = commands.add_parser("export", help="write a logged or registered model to a folder")
    export.add_argument("uri", help=f"runs:/<run id>/{LOGGED_MODEL_NAME} or models:/<name>/<version>")
    export.add_argument("destination", help="a new (or empty) folder")
    for sub in (register, export):
        sub.add_argument("--tracking-uri", help="MLflow tracking URI (default: MLFLOW_TRACKING_URI or ./mlflow.db)")
    return parser.parse_args(argv)


def main(argv=None, prog: str = "sentsweep models") -> int:
    args = parse_args(argv, prog)
    tracking_uri = resolve_tracking_uri(args.tracking_uri)
    try:
        if args.command == "export":
            folder = export_model(tracking_uri, args.uri, args.destination)
            print(f"{args.uri} written to {folder} (load it with SentenceTransformer({str(folder)!r}))")
            return 0
        for version in register_best(tracking_uri, args.experiment, args.sweep_run, args.stage, args.name,
                                     args.versions):
            cells = ", ".join(f"{key[len('table.'):]} {value}" for key, value in version.tags.items()
                              if key.startswith("table.") and not key.endswith(".n"))
            print(f"models:/{version.name}/{version.version}  seed {version.seed}  run {version.run_id}  "
                  f"({version.tags['configuration']}: {cells})")
        return 0
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
