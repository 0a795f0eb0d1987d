"""Where each trial run of a sweep went: one account, which the terminal, the report, the sweep run's description
and the configuration runs all give in the same words.

A run is
- in the table: a finished run its table counts, or a run a race over steps stopped at a rung, which enters its cell
  with its values at that step ("stopped by the race at step 10");
- or left out, with why (`sentsweep.analysis.tables.left_out_reasons`): failed (with its error's last line), stopped
  early (a scheduler, or an interrupted driver), unfinished, replaced by a finished rerun, not counted by the race (a
  seed run ahead for a configuration its race dropped on the seeds before), or finished without a value of the
  metric.

A run of a raced configuration also carries how the race decided that configuration (`race_decision_text`, the
trial runs' tag `race_decision`): "ran to the end after 4 seeds", or "dropped by the race after 2 seeds" / "dropped
by the race at step 10", each followed by the race's own reason, which names its test, its alpha (divided over the
levels or rungs) and its correction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from sentsweep.analysis.racing import BEST, ELIMINATED, RACING, TIED
from sentsweep.analysis.runs import RACE_DECISION_TAG
from sentsweep.analysis.tables import left_out_reasons, runs_entering_cells
from sentsweep.tracking.names import SEED_SEPARATOR

IN_TABLE = "in the table"
LEFT_OUT = "left out"
DROPPED = "dropped by the race"
STOPPED_IN_TABLE = "stopped by the race at step"  # + the step: a run in its cell at the step a rung stopped it


def race_standing(state: str, seeds: int, stopped_step: int | None = None) -> str:
    """A raced configuration's standing in a few words: "dropped by the race at step 10" (a rung dropped it),
    "dropped by the race after 2 seeds", "ran to the end after 4 seeds" (best or tied with the best), or "still
    racing after 3 seeds when the race's budget ended it"."""
    plural = "s" * (seeds != 1)
    if state == ELIMINATED:
        return f"{DROPPED} at step {stopped_step}" if stopped_step is not None else \
            f"{DROPPED} after {seeds} seed{plural}"
    if state in (BEST, TIED):
        return f"ran to the end after {seeds} seed{plural}"
    if state == RACING:
        return f"still racing after {seeds} seed{plural} when the race's budget ended it"
    return f"{state} after {seeds} seed{plural}"


def race_decision_text(state: str, seeds: int, why: str, stopped_step: int | None = None) -> str:
    """How the race decided a configuration: its standing (`race_standing`) and the race's reason (`why`, with the
    test, alpha and correction it decided by)."""
    return f"{race_standing(state, seeds, stopped_step)}: {why}"


def is_dropped(decision) -> bool:
    """Whether a race decision (`race_decision_text`; None or NaN where not raced) dropped its configuration."""
    return isinstance(decision, str) and decision.startswith(DROPPED)


def run_accounts(runs: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """One line per run of `runs` (fetch_trial_runs' frame), indexed as `runs`: `place` (IN_TABLE or LEFT_OUT),
    `reason` (why it is left out; for a run in the table "" or "stopped by the race at step N"), `detail` (a failed
    run's error's last line, else "") and `race` (its configuration's race decision, "" where not raced). With
    `metric`, a finished run without its value is left out "finished without a value of <metric>"."""
    entered = runs_entering_cells(runs) if len(runs) else pd.Series(False, index=runs.index)
    reasons = left_out_reasons(runs, entered) if len(runs) else pd.Series(dtype=object)
    place = pd.Series(LEFT_OUT, index=runs.index, dtype=object).mask(entered, IN_TABLE)
    reason = pd.Series("", index=runs.index, dtype=object)
    reason[reasons.index] = reasons
    column = f"metrics.{metric}"
    if metric is not None:
        unscored = entered & (runs[column].isna() if column in runs else True)
        place[unscored] = LEFT_OUT
        reason[unscored] = f"finished without a value of {metric}"
    stopped = runs.get("race_stopped_at_step", pd.Series(None, index=runs.index))
    at_rung = (place == IN_TABLE) & stopped.notna()
    reason[at_rung] = [f"{STOPPED_IN_TABLE} {int(float(step))}" for step in stopped[at_rung]]
    failures = runs.get("failure_reason", pd.Series(None, index=runs.index))
    detail = pd.Series("", index=runs.index, dtype=object)
    failed = reason == "failed"
    detail[failed] = [_last_line(text) for text in failures[failed]]
    decisions = runs.get(RACE_DECISION_TAG, pd.Series(None, index=runs.index)).astype(object)
    race = decisions.where(decisions.notna(), "").astype(str)
    return pd.DataFrame({"place": place, "reason": reason, "detail": detail, "race": race})


def _last_line(text) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[-1] if lines else "no reason recorded"


def run_reason(account) -> str:
    """One run's account in words: "in the table", "in the table, stopped by the race at step 10", "failed
    (ValueError: ...)", "replaced by a finished rerun", ..."""
    if account["place"] == IN_TABLE:
        return IN_TABLE + (f", {account['reason']}" if account["reason"] else "")
    return account["reason"] + (f" ({account['detail']})" if account["detail"] else "")


def in_table_parts(accounts: pd.DataFrame) -> list[str]:
    """What the runs in the table of `accounts` (`run_accounts`) hold beside finished runs of configurations that
    ran to the end: "4 stopped by the race at step 10" (a race over steps), "4 of configurations dropped by the race
    after 2 seeds" (their finished runs)."""
    in_table = accounts[accounts["place"] == IN_TABLE]
    parts = [f"{count} {reason}" for reason, count in sorted(in_table["reason"].value_counts().items()) if reason]
    dropped = in_table[in_table["race"].map(is_dropped) & (in_table["reason"] == "")]["race"]
    parts += [f"{count} of configurations {standing}" for standing, count in
              sorted(dropped.map(lambda text: text.split(":")[0]).value_counts().items())]
    return parts


def left_out_counts(accounts: pd.DataFrame) -> dict:
    """{reason: runs} of the runs `accounts` leaves out, sorted by reason."""
    return dict(sorted(accounts[accounts["place"] == LEFT_OUT]["reason"].value_counts().items()))


def account_line(runs: pd.DataFrame, metric: str | None = None) -> str:
    """The count of each account of `runs`: "12 trial runs: 12 in the table (of them 4 of configurations dropped by
    the race after 2 seeds); left out: none"."""
    accounts = run_accounts(runs, metric)
    parts = in_table_parts(accounts)
    text = f"{len(runs)} trial run{'s' * (len(runs) != 1)}: {(accounts['place'] == IN_TABLE).sum()} {IN_TABLE}"
    text += f" (of them {'; '.join(parts)})" if parts else ""
    left = ", ".join(f"{count} {reason}" for reason, count in left_out_counts(accounts).items())
    return f"{text}; left out: {left or 'none'}"


def race_decisions(runs: pd.DataFrame) -> dict:
    """{config hash: its race decision} of the raced configurations among `runs` (their trial runs' tag), in the
    runs' order."""
    if RACE_DECISION_TAG not in runs or not len(runs):
        return {}
    raced = runs[runs[RACE_DECISION_TAG].notna() & (runs[RACE_DECISION_TAG].astype(str) != "")]
    return dict(zip(raced["config_hash"], raced[RACE_DECISION_TAG]))


def race_lines(runs: pd.DataFrame, names: Mapping[str, str]) -> list[str]:
    """"- <configuration>: <its race decision>" for each raced configuration of `runs`, dropped ones last;
    `names` {config hash: the configuration's name}."""
    decisions = race_decisions(runs)
    order = sorted(decisions, key=lambda key: (is_dropped(decisions[key]), names.get(key, key)))
    return [f"- {names.get(key, key)}: {decisions[key]}" for key in order]


def seeds_left_out(runs: pd.DataFrame, metric: str | None = None) -> list[str]:
    """"seed 1: <why>" for each run of one configuration that its row does not count, in seed order."""
    accounts = run_accounts(runs, metric)
    left = accounts[accounts["place"] == LEFT_OUT]
    order = sorted(left.index, key=lambda index: _seed_order(runs.at[index, "seed"]))
    return [f"seed {runs.at[index, 'seed']}: {run_reason(left.loc[index])}" for index in order]


def _seed_order(seed) -> tuple:
    text = str(seed)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def configuration_names(runs: pd.DataFrame) -> dict:
    """{config hash: the configuration's name, as its MLflow run is named} from its trial runs' names
    (`<configuration> · seed <seed>`), the config hash where a run has no such name."""
    names = {}
    for key, name in zip(runs.get("config_hash", []), runs.get("run_name", [None] * len(runs))):
        configuration, separator, _ = str(name or "").rpartition(SEED_SEPARATOR)
        names.setdefault(key, configuration if separator else str(key))
    return names


NOT_RACED = "not raced"


@dataclass(frozen=True)
class ConfigurationAccount:
    """One configuration's account: the `seeds` its row counts, each seed `left_out` with why ("seed 2: failed
    (...)"), its race decision (`race`, NOT_RACED where its stage was not raced), its standing in the race in a few
    words (`standing`, `race_standing`; "" where not raced) and whether the race dropped it (`dropped`)."""

    seeds: list
    left_out: list
    race: str
    standing: str = ""
    dropped: bool = False


def configuration_accounts(runs: pd.DataFrame, metric: str | None = None) -> dict:
    """{config hash: ConfigurationAccount} of every configuration among `runs` (a stage's trial runs)."""
    accounts = run_accounts(runs, metric)
    decisions = race_decisions(runs)
    result = {}
    for key in dict.fromkeys(runs["config_hash"]) if len(runs) else []:
        of_key = runs["config_hash"] == key
        counted = runs[of_key & (accounts["place"] == IN_TABLE)]["seed"]
        decision = decisions.get(key)
        result[key] = ConfigurationAccount(sorted(dict.fromkeys(counted), key=_seed_order),
                                           seeds_left_out(runs[of_key], metric), decision or NOT_RACED,
                                           decision.split(":")[0] if decision else "", is_dropped(decision))
    return result


def race_section(runs: pd.DataFrame) -> str:
    """"Race over seeds (0, 1, 2, 3):" and a line per raced configuration (`race_lines`); "" where none raced."""
    lines = race_lines(runs, configuration_names(runs))
    if not lines:
        return ""
    seeds = sorted(dict.fromkeys(map(str, runs["seed"])), key=_seed_order)
    return f"Race over seeds ({', '.join(seeds)}):\n" + "\n".join(lines)


def stage_account(runs: pd.DataFrame, metric: str | None = None) -> str:
    """The account of a stage's runs as the terminal prints it under the table, and the sweep run's description and
    its table artifacts hold it: "Runs: <account_line>.", then for a raced stage its `race_section`."""
    race = race_section(runs)
    return f"Runs: {account_line(runs, metric)}." + (f"\n\n{race}" if race else "")
