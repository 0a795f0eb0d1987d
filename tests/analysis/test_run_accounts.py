"""Every run of a sweep has one account (sentsweep.analysis.run_accounts): in the table, at the step a race stopped
it, or left out with why; a raced configuration's decision in the same words wherever it is given."""

import pandas as pd

from sentsweep.analysis.racing import BEST, ELIMINATED, TIED
from sentsweep.analysis.run_accounts import (
    NOT_RACED,
    account_line,
    configuration_accounts,
    race_decision_text,
    race_section,
    run_accounts,
    stage_account,
)
from sentsweep.analysis.tables import build_table, to_markdown
from sentsweep.tracking.configuration_outcomes import outcome, ranks

WORSE = "significantly worse than noise_ratio=0.3, pooling=mean after 2 seeds (Tukey's range statistic 30.1 > q = " \
        "6.11 at 0.2 / 3 levels, 4 configs, 3 df)"


def run(config, seed, status="FINISHED", value=50.0, **tags):
    name = {"a": "pooling=mean", "b": "pooling=max"}[config]
    return {"run_id": f"{config}{seed}{status}", "run_name": f"{name} · seed {seed}", "status": status,
            "seed": str(seed), "config_hash": config, "ray_trial_id": f"t-{config}{seed}", "failure_reason": None,
            "race_not_counted": None, "race_stopped_at_step": None, "race_decision": None,
            "params.pooling": name.split("=")[1], "metrics.best_sts_dev": value} | tags


def test_race_decisions_say_the_standing_then_the_races_reason():
    assert race_decision_text(ELIMINATED, 2, WORSE) == f"dropped by the race after 2 seeds: {WORSE}"
    assert race_decision_text(ELIMINATED, 2, WORSE, 10) == f"dropped by the race at step 10: {WORSE}"
    assert race_decision_text(BEST, 4, "best mean").startswith("ran to the end after 4 seeds: ")
    assert race_decision_text(TIED, 4, "tied").startswith("ran to the end after 4 seeds: ")


def test_each_run_is_in_the_table_stopped_at_a_rung_or_left_out_with_why():
    dropped = race_decision_text(ELIMINATED, 2, WORSE, 10)
    kept = race_decision_text(BEST, 3, "best mean of the 2 configs left at the maximum of 3 seeds")
    runs = pd.DataFrame([
        run("a", 0, race_decision=kept), run("a", 1, race_decision=kept),
        run("a", 2, "FAILED", None, failure_reason="Traceback\nValueError: the loss is nan", race_decision=kept),
        run("b", 0, "KILLED", 30.0, race_stopped_at_step="10", race_decision=dropped),
        run("b", 1, "KILLED", 31.0, race_stopped_at_step="10", race_decision=dropped),
        run("b", 2, "FINISHED", 33.0, race_not_counted="ahead", race_decision=dropped),
    ])
    accounts = run_accounts(runs)
    assert list(accounts["place"]) == ["in the table"] * 2 + ["left out"] + ["in the table"] * 2 + ["left out"]
    assert list(accounts["reason"]) == ["", "", "failed", "stopped by the race at step 10",
                                        "stopped by the race at step 10", "not counted by the race"]
    line = account_line(runs)
    assert line == ("6 trial runs: 4 in the table (of them 2 stopped by the race at step 10); left out: 1 failed, 1 "
                    "not counted by the race")
    by_config = configuration_accounts(runs)
    assert by_config["a"].seeds == ["0", "1"] and by_config["a"].race == kept
    assert by_config["a"].left_out == ["seed 2: failed (ValueError: the loss is nan)"]
    assert by_config["b"].seeds == ["0", "1"] and by_config["b"].left_out == ["seed 2: not counted by the race"]
    assert race_section(runs) == ("Race over seeds (0, 1, 2):\n"
                                  f"- pooling=mean: {kept}\n- pooling=max: {dropped}")  # dropped last
    assert stage_account(runs) == f"Runs: {line}.\n\n{race_section(runs)}"
    # the table: the stopped cells entered, the runs left out counted as the account counts them
    table = build_table(runs, ["pooling"], ["best_sts_dev"])
    assert sum(cell.n for cell in table.cells.values()) == 4
    markdown = to_markdown(table)
    assert "Runs left out: 1 failed, 1 not counted by the race." in markdown
    assert ("the configurations a race stopped at a rung are kept out of the test (they trained for less), which "
            "leaves fewer than two configurations in each column: nothing was tested") in markdown


def test_the_finished_runs_of_a_configuration_dropped_after_its_first_seeds_are_counted_as_such():
    dropped = race_decision_text(ELIMINATED, 2, WORSE)
    runs = pd.DataFrame([run("a", 0, race_decision=dropped), run("a", 1, race_decision=dropped),
                         run("b", 0, race_decision="ran to the end after 1 seed: best")])
    assert account_line(runs) == ("3 trial runs: 3 in the table (of them 2 of configurations dropped by the race "
                                  "after 2 seeds); left out: none")


def test_an_unraced_stage_has_its_runs_line_alone():
    runs = pd.DataFrame([run("a", 0), run("a", 1, "KILLED")])
    assert stage_account(runs) == "Runs: 2 trial runs: 1 in the table; left out: 1 stopped early."
    assert configuration_accounts(runs)["a"].race == NOT_RACED
    assert configuration_accounts(runs)["a"].left_out == ["seed 1: stopped early"]


def test_a_configuration_the_race_dropped_ranks_after_those_that_ran_to_the_end_and_says_so():
    dropped = race_decision_text(ELIMINATED, 2, WORSE, 10)
    kept = race_decision_text(BEST, 3, "best mean")
    runs = pd.DataFrame([run("a", 0, race_decision=kept), run("b", 0, "KILLED", 90.0, race_stopped_at_step="10",
                                                               race_decision=dropped)])
    accounts = configuration_accounts(runs)
    assert ranks(accounts, {"a": 50.0, "b": 90.0}) == {"a": 1, "b": 2}  # b's mean is of step 10
    assert outcome(accounts["b"], {"selected_steps": "0;0"}) == \
        "dropped by the race at step 10; untrained model kept by every seed"
    assert outcome(accounts["a"], {"selected_steps": "0;40"}) == "ran to the end after 3 seeds"
    unraced = configuration_accounts(pd.DataFrame([run("a", 0)]))["a"]
    assert outcome(unraced, {"selected_steps": "0"}) == "ran to the end; untrained model kept by every seed"
