"""The labelled-data intersection search: bisection on a known curve, and its edge cases."""

import math

import pytest

from sentsweep.experiments._intersection_search import IntersectionSearch


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
