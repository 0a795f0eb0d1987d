"""The seeds' spread as pictures and as MLflow metrics (`seed_plots`, `stage_plots`):
each seed a point beside the mean and its band; a learning curve averaged over the seeds that reached each step."""

import pandas as pd

from sentsweep.analysis.seed_plots import axis_figure, curve_statistics
from sentsweep.sweep.execution.stage_plots import curve_metrics
from tests.analysis.test_run_accounts import run


def test_a_categorical_axis_is_drawn_at_its_values_with_each_seed_a_point():
    runs = pd.DataFrame([run("a", 0, value=50.0), run("a", 1, value=52.0), run("b", 0, value=30.0),
                         run("b", 1, "FAILED", None)])
    figure = axis_figure(runs, "pooling", "best_sts_dev", [], "stage")
    [axes] = figure.axes
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["max", "mean"]
    offsets = [point for collection in axes.collections for point in collection.get_offsets().tolist()
               if hasattr(collection, "get_sizes") and len(collection.get_sizes())]
    assert sorted(map(tuple, offsets)) == [(0.0, 30.0), (1.0, 50.0), (1.0, 52.0)]  # the 3 seeds in the table
    assert [line.get_ydata().tolist() for line in axes.get_lines()] == [[30.0, 51.0]]  # the means


def test_a_learning_curve_is_the_mean_over_the_seeds_that_reached_each_step_its_std_only_where_defined():
    runs = pd.DataFrame([run("a", 0), run("a", 1), run("b", 0, "KILLED", race_stopped_at_step="10")])
    histories = {"a0FINISHED": [(0, 50.0), (10, 54.0), (20, 56.0)], "a1FINISHED": [(0, 50.0), (10, 56.0)],
                 "b0KILLED": [(0, 50.0), (10, 40.0), (20, 41.0)]}
    curves = curve_statistics(histories, runs)
    assert curves["a"]["mean"].tolist() == [50.0, 55.0, 56.0] and curves["a"]["n"].tolist() == [2, 2, 1]
    assert curves["b"].index.tolist() == [0, 10]  # read up to the step the race stopped it at
    logged = curve_metrics(curves["a"], 1)
    assert [(key, step) for key, _, _, step in logged if key == "sts_dev_std"] == [("sts_dev_std", 0),
                                                                                   ("sts_dev_std", 10)]
    assert ("sts_dev_mean", 56.0, 1, 20) in logged and ("sts_dev_n", 1.0, 1, 20) in logged
