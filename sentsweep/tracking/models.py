"""Trained models in MLflow: log a trial's selected model, resolve a model URI, and bring a model to a folder.

A trial that keeps its model (`keep_model`) saves its dev-selected checkpoint as a sentence-transformers folder
in its last Ray checkpoint; the sweep's driver logs that folder to the trial's MLflow run with MLflow's
`sentence_transformers` flavour, as a logged model named by its seed and configuration (`seed 1 · noise_ratio=0p3
pooling=mean`, `sentsweep.tracking.names`), carrying the metrics it was selected on and its scores, once each.
`runs:/<run id>/model` names a run's kept model whatever its name (`loadable_uri`: MLflow's own
`models:/<model id>`). A sweep's `--model` takes such a URI, or a registered version
(`models:/<name>/<version>`), as well as a hub name or a folder: `check_model_uri` fails before anything runs when
the URI names nothing, and `materialize_model` writes the model as a folder every trial can load.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.tracking.names import logged_model_name, result_step
from sentsweep.tracking.store import redact

MODEL_URI_SCHEMES = ("runs:/", "models:/")
LOGGED_MODEL_NAME = "model"  # runs:/<run id>/model: a run's kept model, whatever its name (loadable_uri)
# Metrics a logged model is linked to: those it was selected on and the scores of the selected checkpoint.
SELECTION_METRICS = ("best_sts_dev", "sts_test_at_best_dev", "best_step", "best_validation_loss",
                     "sts_test_at_best_validation_loss", "best_validation_step", "best_task_dev",
                     "sts_test_at_best_task_dev", "best_task_step", "sts_test_last", "total_steps")


def is_model_uri(source: str) -> bool:
    return isinstance(source, str) and source.startswith(MODEL_URI_SCHEMES)


@contextlib.contextmanager
def fluent_tracking(tracking_uri: str):
    """MLflow's fluent API (the flavour's log and load functions, the registry's source lookup) pointed at
    `tracking_uri` for a block."""
    import mlflow

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(tracking_uri)
    try:
        yield mlflow
    finally:
        mlflow.set_tracking_uri(previous)


def _requirements() -> list[str]:
    """The model's pip requirements, given rather than inferred (MLflow's inference imports the model in a
    subprocess, seconds per logged model)."""
    import sentence_transformers
    import torch
    import transformers

    return [f"sentence-transformers=={sentence_transformers.__version__}",
            f"torch=={torch.__version__.split('+')[0]}", f"transformers=={transformers.__version__}"]


def log_trial_model(tracking_uri: str, run_id: str, folder: str | Path, metrics: dict) -> str:
    """Log the sentence-transformers `folder` as run `run_id`'s model, named as the run, carrying the `metrics`
    among `SELECTION_METRICS` (the trial's last result: those it was selected on and its selected checkpoint's
    scores), once each, at the step of that result; returns MLflow's model id.

    MLflow's `log_model` given a run links to the model every metric the run logged at the model's step (0 by
    default: the untrained model's scores); the model is logged without the run and linked to it as the run's
    output here, so that it carries its selected checkpoint's metrics alone.

    Idempotent, for a sweep resumed after its driver died while logging: a model this run logged whole (READY)
    is reused, one left PENDING or FAILED is deleted and logged again, so a run ends with one logged model."""
    from mlflow.entities import LoggedModelOutput, LoggedModelStatus, Metric

    selected = {key: float(value) for key, value in metrics.items() if key in SELECTION_METRICS}
    step = result_step(metrics)
    with fluent_tracking(tracking_uri) as mlflow:
        client = mlflow.MlflowClient(tracking_uri)
        run = client.get_run(run_id)
        earlier = logged_models_of_run(client, run.info.experiment_id, run_id)
        logged = next((model for model in earlier if model.status == LoggedModelStatus.READY), None)
        for model in earlier:
            if model is not logged:
                client.delete_logged_model(model.model_id)
        if logged is None:
            logged = _log_model_folder(mlflow, client, run, folder)
        if logged.model_id not in {output.model_id for output in run.outputs.model_outputs}:
            client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, step)])
        timestamp = run.info.end_time or run.info.start_time
        client.log_batch(run_id, metrics=[Metric(key, value, timestamp, step, model_id=logged.model_id)
                                          for key, value in selected.items()])
        client.set_tag(run_id, "logged_model_id", logged.model_id)
    return logged.model_id


def logged_models_of_run(client, experiment_id: str, run_id: str, name: str = LOGGED_MODEL_NAME) -> list:
    """The logged models run `run_id` produced (MLflow's `LoggedModel`s, any status): named `name`, where that is
    not `LOGGED_MODEL_NAME` (which names a run's kept model, whatever its name)."""
    named = "" if name == LOGGED_MODEL_NAME else f" AND name = '{name}'"
    return list(client.search_logged_models(experiment_ids=[experiment_id],
                                            filter_string=f"source_run_id = '{run_id}'{named}"))


def loadable_uri(tracking_uri: str, uri: str) -> str:
    """The URI MLflow loads `uri`'s model from: runs:/<run id>/model as the run's kept model's own
    models:/<model id> (its logged model is named by its configuration and seed); any other URI as given."""
    from mlflow.tracking import MlflowClient

    if not uri.startswith("runs:/") or uri.rstrip("/").rsplit("/", 1)[-1] != LOGGED_MODEL_NAME:
        return uri
    run_id = uri[len("runs:/"):].partition("/")[0]
    client = MlflowClient(tracking_uri=tracking_uri)
    models = logged_models_of_run(client, client.get_run(run_id).info.experiment_id, run_id)
    return f"models:/{models[0].model_id}" if models else uri


def _log_model_folder(mlflow, client, run, folder: str | Path):
    """A new logged model of `run`, named as the run: the sentence-transformers `folder` with MLflow's flavour,
    logged without the run (whose metrics MLflow would link to it: `log_trial_model` links the two)."""
    from sentence_transformers import SentenceTransformer

    name = logged_model_name(run.info.run_name or LOGGED_MODEL_NAME)
    model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=True)
    logged = client.create_logged_model(run.info.experiment_id, name=name, source_run_id=run.info.run_id,
                                        params=run.data.params, tags={"seed": run.data.tags.get("seed", "")})
    mlflow.sentence_transformers.log_model(model, name=name, model_id=logged.model_id, pip_requirements=_requirements(),
                                           metadata={"selected_on": run.data.tags.get("selected_on", "")})
    return logged


def check_model_uri(tracking_uri: str, uri: str) -> str:
    """The id of the run that produced the model `uri` names (runs:/<run id>/model, models:/<name>/<version>,
    models:/<model id>); an `InputError` naming `uri` when the run, the registered model or version, or the
    run's logged model does not exist."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        if uri.startswith("runs:/"):
            run_id, _, name = uri[len("runs:/"):].partition("/")
            run = client.get_run(run_id)
            if not logged_models_of_run(client, run.info.experiment_id, run_id, name):
                raise InputError(f"model URI {uri!r}: run {run_id} has no logged model named {name!r} (was its "
                                 "sweep run with --keep-models none, or the trial not among those kept?)")
            return run_id
        name, _, version = uri[len("models:/"):].partition("/")
        if not version:  # MLflow 3's own id of a logged model: models:/m-<id>
            return client.get_logged_model(name).source_run_id
        return client.get_model_version(name, version).run_id
    except MlflowException as error:
        raise InputError(f"model URI {uri!r} does not exist at {redact(tracking_uri)}: "
                         f"{redact(error.message)}") from None


def materialize_model(tracking_uri: str, uri: str, folder_root: str | Path) -> Path:
    """The model `uri` as a sentence-transformers folder under `folder_root` (written once per URI), for
    trials to load like any local model."""
    folder = Path(folder_root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", uri.split(":/", 1)[1]).strip("_")
    folder = folder.with_name(f"{folder.name}-{hashlib.sha1(uri.encode()).hexdigest()[:8]}")
    if (folder / "modules.json").is_file():
        return folder.resolve()
    with fluent_tracking(tracking_uri) as mlflow:
        model = mlflow.sentence_transformers.load_model(loadable_uri(tracking_uri, uri))
    model.save(str(folder))
    return folder.resolve()


def export_model(tracking_uri: str, uri: str, destination: str | Path) -> Path:
    """Write the model `uri` to `destination` as a sentence-transformers folder; a destination that already
    holds files is refused (nothing is overwritten)."""
    destination = Path(destination)
    if destination.exists() and any(destination.iterdir()):
        raise InputError(f"export destination {destination} is not empty; nothing was overwritten")
    check_model_uri(tracking_uri, uri)
    with fluent_tracking(tracking_uri) as mlflow:
        model = mlflow.sentence_transformers.load_model(loadable_uri(tracking_uri, uri))
    model.save(str(destination))
    return destination.resolve()
