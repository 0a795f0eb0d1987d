"""The search as the sweep's run records it (`sentsweep.sweep.search.optuna_sampler.search_params`): the sampler
`--sampler` names and the number of configurations it samples where Optuna samples, neither for a grid."""

from sentsweep.sweep.config.options import SweepOptions
from sentsweep.sweep.search.optuna_sampler import search_params
from sentsweep.tracking.sweep_run import experiment_params


def test_an_optuna_search_records_its_sampler_and_a_grid_records_none():
    optuna = search_params(SweepOptions(search="optuna", num_configs=5, sampler="noise-gp"))
    assert optuna == {"search": "optuna", "num_configs": 5, "sampler": "noise-gp"}
    assert search_params(SweepOptions(search="optuna")) == {"search": "optuna", "num_configs": 8, "sampler": "tpe"}
    params = experiment_params([("lr", {"lr": [1e-5]})], [0, 1], {}, {}, optuna)
    assert (params["search"], params["num_configs"], params["sampler"]) == ("optuna", "5", "noise-gp")
    grid = experiment_params([("lr", {"lr": [1e-5]})], [0, 1], {}, {}, search_params(SweepOptions()))
    assert grid["search"] == "grid" and "sampler" not in grid and "num_configs" not in grid
