"""The labelled-data intersection search: bisection on a known curve, and its edge cases; the bracket it leaves, and
Table 10's published points checked against it."""

import math
from types import SimpleNamespace

import pytest

from sentsweep.experiments.tsdae.intersection_search import IntersectionSearch
from sentsweep.experiments.tsdae.labelled_intersection import DEFINITION, check_published_intersection


def run(search: IntersectionSearch, curve) -> list[int]:
    probed = []
    while (size := search.next_size()) is not None:
        probed.append(size)
        search.record(size, curve(size))
    return probed


def test_bisection_finds_the_size_where_the_curve_meets_the_target():
    def curve(n):
        return 40 + 10 * math.log10(n)  # 60 at n = 100

    search = IntersectionSearch(target=60.0, precision=0.5, low=10, high=10_000)
    probed = run(search, curve)
    assert probed[:2] == [10_000, 10]
    assert abs(curve(search.answer) - 60.0) <= 0.5 and search.outcome == "within one seed std of the target"
    assert len(probed) <= 8


def test_a_curve_below_the_target_everywhere_is_reported_not_bisected():
    search = IntersectionSearch(target=90.0, precision=1.0, low=16, high=5_000)
    assert run(search, lambda n: 50.0) == [5_000]
    assert search.answer == 5_000 and search.outcome.startswith("never reached")


def test_a_curve_above_the_target_everywhere_stops_at_the_fewest_pairs():
    search = IntersectionSearch(target=10.0, precision=1.0, low=16, high=5_000)
    assert run(search, lambda n: 50.0) == [5_000, 16]
    assert search.answer == 16 and search.outcome.startswith("already above")


def test_a_steep_curve_closes_the_bracket_between_neighbours():
    search = IntersectionSearch(target=50.0, precision=0.1, low=1, high=64)
    run(search, lambda n: 0.0 if n < 37 else 100.0)  # jumps past the target between 36 and 37
    assert search.answer == 37 and search.outcome == "bracket closed"
    assert search.low == 36


@pytest.mark.parametrize("max_probes", [3])
def test_the_number_of_probes_is_bounded(max_probes):
    search = IntersectionSearch(target=50.0, precision=0.0, low=1, high=1_000_000, max_probes=max_probes)
    assert len(run(search, lambda n: math.log(n) * 5)) == max_probes
    assert search.answer is None and search.outcome.startswith("probe limit reached: between")


def test_the_bracket_holds_the_crossing_and_is_open_where_no_probe_lies_beyond_it():
    search = IntersectionSearch(target=60.0, precision=0.5, low=10, high=10_000)
    run(search, lambda n: 40 + 10 * math.log10(n))  # crosses 60 at n = 100
    low, high = search.bracket()
    assert low < 100 < high and low <= search.answer <= high
    steep = IntersectionSearch(target=50.0, precision=0.1, low=1, high=64)
    run(steep, lambda n: 0.0 if n < 37 else 100.0)
    assert steep.bracket() == (36.0, 37.0)
    below = IntersectionSearch(target=90.0, precision=1.0, low=16, high=5_000)
    run(below, lambda n: 50.0)
    assert below.bracket() == (5_000.0, math.inf)
    above = IntersectionSearch(target=10.0, precision=1.0, low=16, high=5_000)
    run(above, lambda n: 50.0)
    assert above.bracket() == (0.0, 16.0)


# TSDAE App. D, Table 10 as printed: "AskU. CQADup. TwitterP. SciDocs Avg." / "140 2661 6067 464 2333".
TABLE_10 = dict(zip(["askubuntu", "cqadupstack", "twitterpara", "scidocs"], [140, 2661, 6067, 464]))


def test_table_10s_points_are_declared_one_per_target_task():
    results = DEFINITION.published_results
    assert {t.options["target_task"]: t.value for t in results} == TABLE_10
    assert all(t.metric == "intersection_labelled_pairs" and "Table 10" in str(t.source) for t in results)


class FakeSweep:
    def __init__(self, target_task):
        self.options = SimpleNamespace(target_task=target_task)
        self.logged = {}

    def log_sweep_metrics(self, metrics):
        self.logged |= metrics


def searched(crossing: float) -> IntersectionSearch:
    search = IntersectionSearch(target=60.0, precision=0.5, low=16, high=10_000)
    run(search, lambda n: 60.0 + 10 * math.log10(n / crossing))
    return search


@pytest.mark.parametrize("crossing, within", [(140.0, 1.0), (2_000.0, 0.0)])
def test_the_published_point_is_within_when_the_search_brackets_it(crossing, within, capsys):
    sweep = FakeSweep("askubuntu")
    search = searched(crossing)
    check_published_intersection(sweep, search)
    low, high = search.bracket()
    assert (low <= 140 <= high) == bool(within)
    assert sweep.logged == {"intersection_low_pairs": low, "intersection_high_pairs": high,
                            "intersection_published_within": within}
    verdict = "within" if within else "outside"
    assert f"intersection_labelled_pairs 140 is {verdict} [{low:g}, {high:g}]" in capsys.readouterr().out


def test_without_a_table_10_task_nothing_is_checked(capsys):
    sweep = FakeSweep(None)  # STS benchmark dev: no published point
    check_published_intersection(sweep, searched(140.0))
    assert "intersection_published_within" not in sweep.logged and "Reproduction target" not in capsys.readouterr().out
