"""A race's decisions on its stage's MLflow runs: each trial run of a raced configuration is tagged with how the
race decided its configuration (`race_decision`, `sentsweep.analysis.run_accounts.race_decision_text`), and the
stage's runs are returned as MLflow reads them back then, so that the terminal, the sweep run's description and the
configuration runs give the account that `sentsweep analyze report` reads from MLflow later
(`sentsweep.analysis.run_accounts`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from sentsweep.analysis.run_accounts import race_decision_text, run_accounts, run_reason
from sentsweep.analysis.runs import RACE_DECISION_TAG, RACE_NOT_COUNTED_TAG
from sentsweep.tracking.sweep_run import DESCRIPTION_TAG

SPLIT_COLUMNS = ["counted", "stopped_by_race"]


def race_split(runs: pd.DataFrame, counted: set, stopped: Mapping) -> pd.DataFrame:
    """`runs` (a raced stage's trial runs) with the race's split of them, which `decided_runs` and
    `RaceOutcome.counted_runs` both read: `counted` (the race's decisions counted the run's cell; `counted` holds
    the (config hash, seed) cells) and `stopped_by_race` (the step a rung stopped its trial at, from `stopped`
    {Ray trial id: step}; NaN for the others)."""
    return runs.assign(counted=[(key, str(seed)) in counted for key, seed in zip(runs["config_hash"], runs["seed"])],
                       stopped_by_race=runs["ray_trial_id"].map(stopped))


def decided_runs(writer, split: pd.DataFrame, statuses: Mapping, hashes: Mapping) -> pd.DataFrame:
    """The runs of `split` (a raced stage's trial runs, fetched before the race's tags, with `race_split`'s
    columns) with the columns of the race's tags as they read back: `race_decision` of every run of a raced
    configuration (tagged here, through `writer`), `race_stopped_at_step` of the runs a rung stopped, and
    `race_not_counted` of the runs the race did not count (tagged by `RaceOutcome.counted_runs`). Each raced trial
    run's description says where it went (`trial_description`). `statuses` {label: ConfigStatus}, `hashes`
    {label: config hash}."""
    none = pd.Series(None, index=split.index, dtype=object)
    steps = split["stopped_by_race"]
    runs = split.drop(columns=SPLIT_COLUMNS).assign(
        race_stopped_at_step=steps.where(steps.notna(), split.get("race_stopped_at_step", none)))
    uncounted = ~split["counted"] & split["status"].isin(["FINISHED", "KILLED"])
    runs[RACE_NOT_COUNTED_TAG] = runs.get(RACE_NOT_COUNTED_TAG, none).mask(uncounted, "not counted by the race")
    decisions = {}
    for label, status in statuses.items():
        key = hashes[label]
        at = pd.to_numeric(runs.loc[runs["config_hash"] == key, "race_stopped_at_step"], errors="coerce").dropna()
        decisions[key] = race_decision_text(status.state, status.n + status.failed, status.why,
                                            int(at.max()) if len(at) else None)
    runs[RACE_DECISION_TAG] = runs["config_hash"].map(decisions)
    accounts = run_accounts(runs)
    for index, trial_id, decision in zip(runs.index, runs["ray_trial_id"], runs[RACE_DECISION_TAG]):
        if isinstance(decision, str) and isinstance(trial_id, str):
            writer.submit({"op": "tag", "trial": trial_id, "key": RACE_DECISION_TAG, "value": decision})
            writer.submit({"op": "tag", "trial": trial_id, "key": DESCRIPTION_TAG,
                           "value": trial_description(accounts.loc[index], decision)})
    return runs


def undecided_runs(writer, runs: pd.DataFrame) -> pd.DataFrame:
    """`runs` (the trial runs of a stage that is not raced: an --extend of a raced sweep) with no race decision:
    the `race_decision` tags and descriptions an earlier race left on them are emptied (through `writer`), so every
    account of the stage, `sentsweep analyze report`'s included, says it is not raced."""
    if RACE_DECISION_TAG not in runs:
        return runs
    decided = runs[RACE_DECISION_TAG].notna() & (runs[RACE_DECISION_TAG].astype(str) != "")
    for trial_id in runs.loc[decided, "ray_trial_id"]:
        if isinstance(trial_id, str):
            writer.submit({"op": "tag", "trial": trial_id, "key": RACE_DECISION_TAG, "value": ""})
            writer.submit({"op": "tag", "trial": trial_id, "key": DESCRIPTION_TAG, "value": ""})
    return runs.assign(**{RACE_DECISION_TAG: runs[RACE_DECISION_TAG].mask(decided, "")})


def trial_description(account, decision: str) -> str:
    """A raced trial run's description (the run page's first block): where the run went ("in the table, stopped by
    the race at step 10": a run the race stopped, not a failed one) and how the race decided its configuration."""
    return f"**{run_reason(account)}**\n\n- its configuration: {decision}"
