"""Best groups in the comparison tables: membership checked against scipy and a Holm written here, the marks in
Markdown, LaTeX and CSV, per-query tests, the family-wise error rate under the null, and the CLI's options."""

import math

import numpy as np
import pandas as pd
import pytest
from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient
from scipy import stats

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.tables import build_table, per_query_name, to_frame, to_latex, to_markdown
from sentsweep.errors import InputError
from tests.helpers.cluster_helpers import sqlite_store


def runs_frame(cells: dict, metric: str = "score", run_ids: dict | None = None) -> pd.DataFrame:
    """A runs DataFrame as fetch_trial_runs returns it from {config: {seed: value}} (one param, `config`)."""
    records = [{"run_id": (run_ids or {}).get((config, seed), f"{config}-{seed}"), "status": "FINISHED",
                "seed": seed, "config_hash": config, "params.config": config, f"metrics.{metric}": value}
               for config, by_seed in cells.items() for seed, value in by_seed.items()]
    return pd.DataFrame(records)


def holm(p_values: list) -> list:
    """Holm's step-down adjustment (Holm 1979), written out: sorted p_(1) <= ... <= p_(m), p~_(j) = max over
    i <= j of (m - i + 1) p_(i), capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, (len(p_values) - rank) * p_values[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def expected_group(cells: dict, alpha: float, correction: str) -> tuple:
    """(best, {config: (raw p, adjusted p) against the best}, group, pairs tested) computed apart from sentsweep:
    scipy's ttest_rel on the shared seeds of every pair sharing >= 2, the p-values of all pairs adjusted together;
    out of the group where the adjusted p against the best < alpha and the shared seeds favour the best."""
    means = {config: np.mean(list(by_seed.values())) for config, by_seed in cells.items()}
    best = max(means, key=means.get)
    configs = list(cells)
    pairs, raw, favours_first = [], [], []
    for i, first in enumerate(configs):
        for second in configs[i + 1:]:
            shared = sorted(set(cells[first]) & set(cells[second]))
            if len(shared) >= 2:
                pairs.append((first, second))
                result = stats.ttest_rel([cells[first][s] for s in shared], [cells[second][s] for s in shared])
                raw.append(result.pvalue)
                favours_first.append(result.statistic > 0)  # mean of first - second over the shared seeds
    adjusted = {"holm": holm(raw), "bonferroni": [min(1.0, len(raw) * p) for p in raw], "none": raw}[correction]
    against_best = {}
    worse = set()
    for (first, second), p, q, first_higher in zip(pairs, raw, adjusted, favours_first):
        if best in (first, second):
            other = second if first == best else first
            against_best[other] = (p, q)
            if q < alpha and first_higher == (first == best):  # the shared seeds favour the best
                worse.add(other)
    group = set(configs) - worse
    return best, against_best, group, len(pairs)


def column_cells(markdown: str) -> dict:
    """{config: its cell's text} of a one-column Markdown table."""
    return {line.split(" | ")[0][2:]: line.split(" | ")[1].rstrip(" |") for line in markdown.splitlines()[2:]
            if line.startswith("| ")}


# A column where Holm, Bonferroni and no correction give three different groups; "d" lacks seed 3 (failed run),
# "solo" has one seed, so it shares fewer than 2 with the best and cannot be tested.
RNG = np.random.default_rng(27)
CELLS = {config: {str(s): mean + RNG.normal(0, 0.6) for s in range(4)}
         for config, mean in {"a": 70.0, "b": 69.7, "c": 69.0, "d": 68.0, "e": 66.0}.items()}
del CELLS["d"]["3"]
CELLS["solo"] = {"0": 60.0}


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "none"])
def test_group_membership_equals_an_independent_computation_and_the_marks_follow_it(correction, tmp_path):
    groups = {c: expected_group(CELLS, 0.05, c)[2] for c in ("holm", "bonferroni", "none")}
    assert len({frozenset(g) for g in groups.values()}) == 3  # the column tells the corrections apart
    best, against_best, group, family = expected_group(CELLS, 0.05, correction)
    assert "solo" in group and 2 < len(group) < len(CELLS)  # some tested configs in the group, some out

    table = build_table(runs_frame(CELLS), ["config"], ["score"], correction=correction)
    assert table.best["score"] == (best,) and table.groups["score"].family_size == family == 10
    markdown = to_markdown(table)
    texts = column_cells(markdown)
    for config in CELLS:
        text = texts[config].split(" (n=")[0]
        if config == best:
            assert text.startswith("**") and text.endswith("**")
        elif config in group:
            assert text.endswith("≈") and "**" not in text
        else:
            assert not text.endswith("≈") and "**" not in text, (config, text)
    assert "Not tested (fewer than 2 seeds shared with the best), so kept in the group: config=solo." in markdown
    name = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "none"}[correction]
    assert f"paired t-test over seeds; correction: {name}" in markdown and "(10 pairs); alpha = 0.05)." in markdown
    assert to_latex(table).count(r"$^{\approx}$") == len(group)  # the group's cells but the best's, the caption

    path = tmp_path / "table.csv"
    to_frame(table).to_csv(path, index=False)
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""]).set_index("config")
    assert set(frame.index[frame["in_best_group"]]) == group
    assert list(frame.index[frame["best"]]) == [best]
    for config, (raw, adjusted) in against_best.items():
        assert frame.loc[config, "p_vs_best"] == pytest.approx(raw, rel=1e-9)
        assert frame.loc[config, "p_vs_best_adjusted"] == pytest.approx(adjusted, rel=1e-9)
        assert frame.loc[config, "test"] == "paired t over seeds"
    assert frame.loc["solo", "test"] == "not tested" and math.isnan(frame.loc["solo", "p_vs_best"])
    assert set(frame["correction"]) == {correction} and set(frame["family_size"]) == {10}


def test_lower_is_better_picks_the_smallest_and_its_group():
    negated = {config: {s: -v for s, v in by_seed.items()} for config, by_seed in CELLS.items()}
    table = build_table(runs_frame(negated), ["config"], ["score"], higher_is_better=False)
    best, _, group, _ = expected_group(CELLS, 0.05, "holm")
    assert table.best["score"] == (best,)
    assert {row[0] for row in table.groups["score"].group} == group


def test_bad_alpha_or_correction_in_build_table():
    for alpha, correction, named in ((1.5, "holm", "1.5"), (0.0, "holm", "0.0"), (0.05, "fdr", "'fdr'")):
        with pytest.raises(InputError, match=named):
            build_table(runs_frame(CELLS), ["config"], ["score"], alpha=alpha, correction=correction)


# --- per-query outcomes ------------------------------------------------------------------------------------


def test_per_query_name_rule():
    assert per_query_name("squad_top1") == "squad_top1" and per_query_name("distractors_top1") == "distractors_top1"
    assert per_query_name("askubuntu_map") == "askubuntu_ap" and per_query_name("scidocs_map") == "scidocs_ap"
    assert per_query_name("cqadupstack_map_at_100") == "cqadupstack_ap"
    assert per_query_name("sts_test_at_best_dev") is None and per_query_name("quora_ndcg_at_10") is None


def per_query_runs():
    """3 configs x 3 seeds with `squad_top1` (40 queries, 1/0, the metric is 100 x their mean), `scidocs_map`
    (its per-query AP do not average to it: a macro average) and `askubuntu_map` (one run has no outcomes)."""
    rng = np.random.default_rng(11)
    rates = {"x": 0.75, "y": 0.7, "z": 0.35}
    records, per_query, outcomes = [], {}, {}
    for config, rate in rates.items():
        for seed in "012":
            run_id = f"{config}-{seed}"
            top1 = (rng.random(40) < rate).astype(float).tolist()
            ap = rng.random(30).tolist()
            outcomes[(config, seed)] = top1
            per_query[run_id] = {"squad_top1": top1, "scidocs_ap": ap}
            if run_id != "z-2":
                per_query[run_id]["askubuntu_ap"] = ap
            records.append({"run_id": run_id, "status": "FINISHED", "seed": seed, "params.config": config,
                            "metrics.squad_top1": 100 * np.mean(top1), "metrics.scidocs_map": 100 * np.mean(ap) + 1,
                            "metrics.askubuntu_map": 100 * np.mean(ap)})
    return pd.DataFrame(records), per_query, outcomes


def test_per_query_columns_are_tested_over_queries_and_equal_scipy():
    frame, per_query, outcomes = per_query_runs()
    metrics = ["squad_top1", "scidocs_map", "askubuntu_map"]
    table = build_table(frame, ["config"], metrics, per_query=per_query)
    assert table.item_tested == {"squad_top1": "squad_top1"}
    group = table.groups["squad_top1"]
    best = group.best[0]
    averaged = {config: np.mean([outcomes[(config, s)] for s in "012"], axis=0) for config in "xyz"}
    pairs = [("x", "y"), ("x", "z"), ("y", "z")]
    raw = [stats.ttest_rel(averaged[a], averaged[b]).pvalue for a, b in pairs]
    adjusted = dict(zip(pairs, holm(raw)))
    for config in "xyz":
        member = group.members[(config,)]
        if config == best:
            continue
        pair = (best, config) if (best, config) in adjusted else (config, best)
        assert member.test == "paired t over items"
        assert member.p_adjusted == pytest.approx(adjusted[pair], rel=1e-9)
        assert member.in_best_group == (adjusted[pair] >= 0.05 or np.mean(averaged[config]) > np.mean(averaged[best]))
    assert not group.members[("z",)].in_best_group  # 35% against 75% top-1 over 40 queries
    # The other two columns fall back to seeds, and the footnote says why.
    assert all(m.test in ("", "paired t") for column in metrics[1:] for m in table.groups[column].members.values())
    markdown = to_markdown(table)
    assert ("two-sided paired t-test over queries (each query's outcome averaged over the seeds a pair shares) in "
            "squad_top1, two-sided paired t-test over seeds in the other columns") in markdown
    assert "scidocs_map: 100 x the mean of per-query scidocs_ap is not the metric in 9 of 9 runs" in markdown
    assert "askubuntu_map: no per-query askubuntu_ap for 1 of 9 runs" in markdown
    csv = to_frame(table).set_index(["config", "metric"])
    assert csv.loc[("z", "squad_top1"), "test"] == "paired t over items"
    assert csv.loc[("z", "scidocs_map"), "test"] == "paired t over seeds"
    # Without per-query outcomes, every column is tested over seeds.
    assert build_table(frame, ["config"], metrics).item_tested == {}


# --- the family-wise error rate under the null -------------------------------------------------------------


def test_family_wise_rate_under_the_null_stays_at_alpha_with_holm_and_bonferroni():
    """1,000 simulated tables of 6 configurations x 5 seeds, all configurations equal (one true mean, Gaussian
    seed noise): the rate of tables where some configuration is declared significantly worse than the best (out
    of the group) stays at alpha plus its Monte Carlo error with Holm and Bonferroni, and is well above it
    without a correction. Each table is one column of a single table by `table` (each column is its own family,
    as separate tables would be; a few columns are checked against tables of their own)."""
    rng = np.random.default_rng(2025)
    alpha, tables, configs, seeds = 0.05, 1000, 6, 5
    values = rng.normal(70.0, 1.0, size=(tables, configs, seeds)) + rng.normal(0, 2.0, size=(tables, 1, seeds))
    frame = pd.DataFrame([{"run_id": f"{t}-{c}-{s}", "status": "FINISHED", "seed": str(s),
                           "params.config": f"c{c}", "params.table": t, "metrics.score": values[t, c, s]}
                          for t in range(tables) for c in range(configs) for s in range(seeds)])
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / tables)
    rates = {}
    for correction in ("holm", "bonferroni", "none"):
        table = build_table(frame, ["config"], ["score"], column_param="table", correction=correction)
        assert len(table.groups) == tables and all(g.family_size == 15 for g in table.groups.values())
        rates[correction] = sum(len(g.group) < configs for g in table.groups.values()) / tables
        for t in range(0, tables, 250):  # the same group as a table of that column alone
            alone = build_table(frame[frame["params.table"] == t], ["config"], ["score"], correction=correction)
            assert alone.groups["score"].group == table.groups[t].group
    assert rates["holm"] <= bound and rates["bonferroni"] <= bound, rates
    assert rates["bonferroni"] <= rates["holm"]
    assert rates["none"] > 2 * bound, rates  # without the correction the check fails: it can tell


# --- the CLI -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["table", "report"])
@pytest.mark.parametrize("option, value, message", [
    ("--alpha", "1.5", "--alpha must be a number in (0, 1), got '1.5'"),
    ("--alpha", "0", "--alpha must be a number in (0, 1), got '0'"),
    ("--alpha", "abc", "--alpha must be a number in (0, 1), got 'abc'"),
    ("--correction", "foo", "--correction must be one of holm, bonferroni, none, got 'foo'"),
])
def test_bad_alpha_or_correction_fails_before_fetching_runs(command, option, value, message, monkeypatch, capsys):
    def fetch(args):
        raise AssertionError("runs fetched before the options were checked")

    monkeypatch.setattr(analysis_cli, "fetch", fetch)
    argv = [command, "--experiment", "nm_weight", "--rows", "method", option, value]
    argv += ["--columns", "w", "--output", "report.md"] if command == "report" else []
    assert analysis_cli.main(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"


def test_per_query_without_a_per_query_metric_fails_before_fetching(monkeypatch, capsys):
    monkeypatch.setattr(analysis_cli, "fetch", lambda args: pytest.fail("runs fetched"))
    assert analysis_cli.main(["table", "--experiment", "e", "--rows", "method", "--metrics", "sts_test",
                              "--per-query"]) == 2
    assert "--per-query: none of the metrics ['sts_test'] has per-query outcomes" in capsys.readouterr().err


def test_report_gets_alpha_and_correction(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(analysis_cli, "fetch", lambda args: runs_frame(CELLS))
    monkeypatch.setattr(analysis_cli, "report_targets", lambda args: ())
    monkeypatch.setattr(analysis_cli, "write_report",
                        lambda runs, request, targets: seen.update(vars(request)) or "report.md")
    assert analysis_cli.main(["report", "--experiment", "e", "--rows", "config", "--columns", "w", "--output",
                              str(tmp_path / "r.md"), "--alpha", "0.01", "--correction", "bonferroni"]) == 0
    assert (seen["alpha"], seen["correction"]) == (0.01, "bonferroni")


def log_per_query_sweep(tmp_path) -> tuple[str, dict]:
    """A sweep in a SQLite store: methods a, b, c x seeds 0-2 with `sts_test` and `squad_top1`, each run's
    per_query.json holding its 50 top-1 outcomes. Returns the URI and {(method, seed): outcomes}."""
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    experiment = client.create_experiment("pq", artifact_location=(tmp_path / "artifacts").as_uri())
    parent = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    rng = np.random.default_rng(3)
    outcomes = {}
    for method, rate in (("a", 0.8), ("b", 0.75), ("c", 0.4)):
        for seed in "012":
            run = client.create_run(experiment, tags={"sweep_run_id": parent, "seed": seed}).info.run_id
            top1 = (rng.random(50) < rate).astype(float).tolist()
            outcomes[(method, seed)] = top1
            client.log_batch(run, params=[Param("method", method)],
                             metrics=[Metric("squad_top1", 100 * float(np.mean(top1)), 0, 0),
                                      Metric("sts_test", 70 + rng.normal(0, 1), 0, 0)])
            client.log_dict(run, {"squad_top1": top1}, "per_query.json")
            client.set_terminated(run)
    client.set_terminated(parent)
    return uri, outcomes


def test_table_per_query_tests_over_queries_with_the_options_given(tmp_path, monkeypatch, capsys):
    uri, outcomes = log_per_query_sweep(tmp_path)
    csv_path = tmp_path / "table.csv"
    argv = ["table", "--experiment", "pq", "--tracking-uri", uri, "--rows", "method", "--metrics", "squad_top1",
            "sts_test", "--per-query", "--alpha", "0.01", "--correction", "bonferroni", "--csv", str(csv_path)]
    assert analysis_cli.main(argv) == 0
    out = capsys.readouterr().out
    assert ("two-sided paired t-test over queries (each query's outcome averaged over the seeds a pair shares) in "
            "squad_top1, two-sided paired t-test over seeds in the other columns; correction: Bonferroni") in out
    assert "(3 pairs per column); alpha = 0.01)." in out
    frame = pd.read_csv(csv_path, keep_default_na=False, na_values=[""]).set_index(["method", "metric"])
    averaged = {m: np.mean([outcomes[(m, s)] for s in "012"], axis=0) for m in "abc"}
    best = max("abc", key=lambda m: averaged[m].mean())
    for method in set("abc") - {best}:
        row = frame.loc[(method, "squad_top1")]
        raw = stats.ttest_rel(averaged[best], averaged[method]).pvalue
        assert row["test"] == "paired t over items" and row["p_vs_best"] == pytest.approx(raw, rel=1e-9)
        assert row["p_vs_best_adjusted"] == pytest.approx(min(1.0, 3 * raw), rel=1e-9)
        assert row["in_best_group"] == (min(1.0, 3 * raw) >= 0.01)
    tests = frame.xs("sts_test", level="metric")["test"].fillna("")  # empty for the best
    assert sorted(tests) == ["", "paired t over seeds", "paired t over seeds"]
    assert set(frame["alpha"]) == {0.01} and set(frame["correction"]) == {"bonferroni"}
    assert not frame.loc[("c", "squad_top1"), "in_best_group"]

    # A run without its artifact: the command still works, the column is tested over seeds and says why.
    real = analysis_cli.per_query_outcomes
    fetched = []

    def per_query_outcomes(tracking_uri, run_id):
        fetched.append(run_id)
        if len(fetched) == 1:
            raise InputError(f"run {run_id} has no per_query.json")
        return real(tracking_uri, run_id)

    monkeypatch.setattr(analysis_cli, "per_query_outcomes", per_query_outcomes)
    assert analysis_cli.main(argv) == 0 and len(fetched) == 9
    out = capsys.readouterr().out
    assert "Tested over seeds, per-query outcomes not used: squad_top1: no per-query squad_top1 for 1 of 9 runs." in out
    assert "over queries" not in out
