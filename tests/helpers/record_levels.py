"""Every level of a sweep's MLflow record checked against its trials, through MLflow's API: each configuration run
carries its trials' shared params, their provenance and the datasets they read; the sweep's run their code
version, the driver's provenance, every dataset they read, and each setting it shares with them at the value they
used; a trial's dataset inputs are data settings it read."""

from __future__ import annotations

import json
from pathlib import Path

from mlflow.tracking import MlflowClient

from sentsweep.tracking.names import PARAM_ALIASES
from sentsweep.tracking.provenance import DIFFERING_SEPARATOR, DRIVER_NODE, NODE_OF_TAG, TRIALS_NODES
from sentsweep.tracking.used_values import DIFFERS
from sentsweep.trainables.resolved_settings import NOT_READ

CODE_TAGS = ("code_version", "sentsweep.version", "sentsweep.commit", "sentsweep.dirty", "python")
SWEEP_LEVEL_PARAMS = {"grid", "seeds", "search", "num_configs", "sampler", "scheduler", "selection_metric", "alpha",
                      "correction", "keep_models", "race"}


def inputs_of(run) -> set[tuple[str, str]]:
    """(name, digest) of each dataset input of `run`."""
    return {(item.dataset.name, item.dataset.digest) for item in run.inputs.dataset_inputs}


def levels(uri: str, experiment: str, sweep_run_id: str):
    """(the sweep's run, its configuration runs, its trial runs)."""
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    sweep = client.get_run(sweep_run_id)
    configurations = client.search_runs([experiment_id], f"tags.configuration_of = '{sweep_run_id}'")
    trials = client.search_runs([experiment_id], f"tags.sweep_run_id = '{sweep_run_id}'")
    return sweep, configurations, trials


def shared(runs, key) -> dict[str, str]:
    """{name: value} of what `key(run)` (a mapping) holds with one value in every one of `runs`."""
    values: dict[str, set] = {}
    for run in runs:
        for name, value in key(run).items():
            values.setdefault(name, set()).add(value)
    return {name: found.pop() for name, found in values.items()
            if len(found) == 1 and all(name in key(run) for run in runs)}


def assert_trial_inputs_were_read(trial) -> None:
    params = trial.data.params
    tasks = params.get("eval_tasks", "None")
    read = {Path(value).name for value in params.values()} | set(json.loads(tasks) if tasks != "None" else {})
    for item in trial.inputs.dataset_inputs:
        assert NOT_READ not in (item.dataset.name, item.dataset.source), trial.info.run_name
        assert item.dataset.name in read, (trial.info.run_name, item.dataset.name)


def assert_configuration_agrees(configuration, trials) -> None:
    """`configuration`'s params, tags and inputs against its `trials`'."""
    name = configuration.info.run_name
    params = {key: value for key, value in configuration.data.params.items() if key not in PARAM_ALIASES.values()}
    settings = {key: value for key, value in shared(trials, lambda run: run.data.params).items()
                if key != "seed" and not key.startswith("trainer.")}
    assert params == settings, (name, set(params) ^ set(settings))
    tags = configuration.data.tags
    for tag in CODE_TAGS:
        assert tags[tag] == DIFFERING_SEPARATOR.join(sorted({trial.data.tags[tag] for trial in trials})), (name, tag)
    packages = {tag for trial in trials for tag in trial.data.tags if tag.startswith("package.")}
    assert packages and packages <= set(tags), name
    assert tags[NODE_OF_TAG] == TRIALS_NODES
    assert all(trial.data.tags["node.hostname"] in tags["node.hostname"] for trial in trials)
    assert inputs_of(configuration) == set().union(*(inputs_of(trial) for trial in trials)), name


def assert_every_level_agrees(uri: str, experiment: str, sweep_run_id: str) -> tuple:
    """Each level of the sweep against its trials (the module docstring); returns (sweep, configurations,
    trials)."""
    sweep, configurations, trials = levels(uri, experiment, sweep_run_id)
    assert configurations and trials
    for trial in trials:
        assert_trial_inputs_were_read(trial)
    for configuration in configurations:
        assert_configuration_agrees(configuration, [trial for trial in trials if trial.data.tags["config_hash"]
                                                    == configuration.data.tags["config_hash"]])
    tags = sweep.data.tags
    for tag in CODE_TAGS:
        assert tags[tag] == shared(trials, lambda run: run.data.tags)[tag], tag
    assert tags[NODE_OF_TAG] == DRIVER_NODE and any(tag.startswith("package.") for tag in tags)
    assert inputs_of(sweep) == set().union(*(inputs_of(trial) for trial in trials))
    used = {name: values for name, values in shared_or_all(trials).items()}
    for name, value in sweep.data.params.items():
        if name in used and name not in SWEEP_LEVEL_PARAMS:
            values = used[name]
            assert value == values[0] if len(values) == 1 else value.startswith(DIFFERS), (name, value, values)
    return sweep, configurations, trials


def shared_or_all(trials) -> dict[str, list[str]]:
    """{param: its distinct values} of the params every trial has."""
    names = set.intersection(*(set(trial.data.params) for trial in trials))
    return {name: sorted({trial.data.params[name] for trial in trials}) for name in names}
