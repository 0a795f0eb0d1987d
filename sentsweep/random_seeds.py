"""Seeds as a repeated axis: every configuration runs once per seed.

Grid mode crosses the grid with `seed: tune.grid_search(seeds)`. Optuna mode wraps the searcher in Ray Tune's
`Repeater`, which sets `__trial_index__` (0..K-1) in each repeat's config and hands the searcher the mean
over the K repeats; the seed is then `seeds[__trial_index__]`.
"""

from __future__ import annotations

from sentsweep.errors import InputError

TRIAL_INDEX_KEY = "__trial_index__"


def resolve_seed(config: dict) -> int:
    """The random seed of the trial whose config this is (see the module docstring)."""
    if "seed" in config:
        return int(config["seed"])
    if "seeds" in config and TRIAL_INDEX_KEY in config:
        return int(config["seeds"][config[TRIAL_INDEX_KEY]])
    raise KeyError("config has neither 'seed' nor 'seeds' with '__trial_index__'")


def parse_seeds(value: str) -> list[int]:
    """'3' means seeds 0, 1, 2; '7,11,13' means exactly those seeds."""
    try:
        if "," in value:
            seeds = [int(part) for part in value.split(",") if part.strip()]
        else:
            seeds = list(range(int(value)))
    except ValueError:
        raise InputError(f"seeds {value!r}: expected a count such as 5 or a list such as 0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise InputError(f"seeds {value!r}: need at least one seed, non-negative, without repeats")
    return seeds
