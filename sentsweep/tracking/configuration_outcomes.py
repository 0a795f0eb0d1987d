"""How a configuration ended in its stage, beside its standing in the table, where the saved views rank it.

- `outcome` (a configuration run's tag, a column of the saved views): "dropped by the race at step 10" or "dropped
  by the race after 2 seeds" (the race's standing of it, `sentsweep.analysis.run_accounts.race_standing`), "ran to
  the end after 4 seeds" (raced), "ran to the end" (not raced), and "untrained model kept by every seed" where each
  of its seeds selected step 0 on the selection metric (no trained checkpoint beat the model before training), after
  the race's standing where it raced;
- `rank` (a configuration run's metric, by which the saved views sort): 1 for the best; the configurations that ran
  to the end first, by the selection metric's mean, then those the race dropped, by theirs (their means are of fewer
  seeds, or of a step before the end: not comparable with the others').
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

OUTCOME_TAG = "outcome"
RANK_METRIC = "rank"
RAN_TO_THE_END = "ran to the end"
UNTRAINED = "untrained model kept by every seed"


def all_untrained(line) -> bool:
    """Whether every seed of a cell (a `to_frame` line) kept the untrained model: its selected steps all 0."""
    steps = str(line.get("selected_steps") or "")
    return bool(steps) and all(step == "0" for step in steps.split(";"))


def outcome(account, line) -> str:
    """A configuration's outcome (module docstring): `account` its ConfigurationAccount, `line` its cell of the
    selection metric (`to_frame`; None where it has none)."""
    parts = [account.standing if account.standing else RAN_TO_THE_END]
    if line is not None and all_untrained(line):
        parts.append(UNTRAINED)
    return "; ".join(parts)


def ranks(accounts: Mapping, means: Mapping[str, float]) -> dict[str, int]:
    """{config hash: rank} (module docstring): `accounts` {config hash: ConfigurationAccount}, `means` {config hash:
    the selection metric's mean} (a configuration without one last)."""
    def order(key):
        mean = means.get(key)
        missing = mean is None or pd.isna(mean) or not math.isfinite(float(mean))
        return (accounts[key].dropped, missing, 0.0 if missing else -float(mean))

    return {key: rank for rank, key in enumerate(sorted(accounts, key=order), start=1)}
