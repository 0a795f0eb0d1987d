"""The sampler `--search optuna` proposes configurations with, built here with every setting stated.

Ray Tune's `OptunaSearch`, given a seed and no sampler, builds `optuna.samplers.TPESampler(seed=seed)` with the
defaults of whichever Optuna is installed, and those moved between releases: up to Optuna 4 (3.6.1 and 4.5.0
read alike) the TPE sampler was independent (`multivariate=False`) and without the constant liar
(`constant_liar=False`); Optuna 5.0 samples every parameter jointly for a study of one objective
(`multivariate=None`, taken as True) and has running trials count as bad (`constant_liar=True`). The same sweep
then proposed other configurations under another Optuna. So the sampler is made here (`make_sampler`) with
`TPE_SETTINGS` and `SAMPLER_SEED`, the card states them with the Optuna version (`sampler_description`), and
the project's floor is Optuna 5.0, the release these settings are the defaults of (an older one would run other
code under the same settings). tests/sweep/test_optuna_sampler.py pins the configurations a sweep's sampler proposes
under the lock's Optuna: a release that proposes others fails it before it reaches a sweep.

The settings are the project's choice: Optuna 5.0's defaults for one objective (Watanabe, S. (2023).
Tree-structured Parzen estimator: understanding its algorithm components and their roles for better empirical
performance. arXiv:2304.11127, is where Optuna's documentation points for them). TPESampler's other arguments
(`consider_prior`, `prior_weight`, `consider_magic_clip`, `consider_endpoints`, `gamma`, `weights`) are
deprecated in Optuna 5.0 and fixed at their defaults until their removal in 6.0: passing them only warns.
"""

from __future__ import annotations

from importlib.metadata import version

SAMPLER_SEED = 0  # the project's choice; every --search optuna sweep's proposals follow from it
TPE_SETTINGS = {"n_startup_trials": 10, "n_ei_candidates": 24, "multivariate": True, "group": False,
                "constant_liar": True}


def make_sampler(name: str = "tpe"):
    """The sampler `--sampler` names of a `--search optuna` sweep, seeded with `SAMPLER_SEED`: TPE with
    `TPE_SETTINGS`, the noise-aware GP (`sentsweep.sweep.search.noise_aware_sampler`) or that GP at the rungs
    (`sentsweep.sweep.search.rung_model_sampler`)."""
    if name == "noise-gp":
        from sentsweep.sweep.search.noise_aware_sampler import NoiseAwareGPSampler  # lazy: optuna, torch

        return NoiseAwareGPSampler(seed=SAMPLER_SEED)
    if name == "rung-gp":
        from sentsweep.sweep.search.rung_model_sampler import RungModelSampler  # lazy: optuna, torch

        return RungModelSampler(seed=SAMPLER_SEED)
    from optuna.samplers import TPESampler  # lazy: optuna

    return TPESampler(seed=SAMPLER_SEED, **TPE_SETTINGS)


def search_params(options) -> dict:
    """The search as the sweep's run's params: `search`, and for `--search optuna` the `num_configs` it samples and
    the `sampler` that proposes them (None where there is no such param: a grid samples nothing)."""
    optuna = options.search == "optuna"
    return {"search": options.search, "num_configs": options.num_configs if optuna else None,
            "sampler": options.sampler if optuna else None}


def sampler_description(name: str = "tpe") -> str:
    """The sampler as the card states it: its class, seed and settings (for the GP, what it assumes), and the
    Optuna it runs on."""
    if name == "noise-gp":
        from sentsweep.sweep.search import noise_aware_sampler as gp  # lazy: optuna

        return (f"NoiseAwareGPSampler(seed={SAMPLER_SEED}): each configuration's seed mean observed with its standard "
                f"error as noise (se^2 moderated toward the pooled se^2, fixed per configuration; one seed: the "
                f"pooled), a Matérn 5/2 GP with one length scale per parameter averaged over its hyperparameters "
                f"({gp.HYPER_DRAWS} draws from a log-uniform prior, length scales {gp.LENGTH_RANGE[0]:g} to "
                f"{gp.LENGTH_RANGE[1]:g} of each range, weighted by their likelihood), assuming a score smooth on "
                f"such a length scale; Thompson sampling over {gp.CANDIDATES} random candidates, the first "
                f"{gp.STARTUP_TRIALS} configurations random, Optuna {version('optuna')}")
    if name == "rung-gp":
        from sentsweep.sweep.search.rung_model_sampler import description  # lazy: optuna

        return f"{description(SAMPLER_SEED)}; Optuna {version('optuna')}"
    settings = ", ".join(f"{name}={value}" for name, value in TPE_SETTINGS.items())
    return f"TPESampler(seed={SAMPLER_SEED}, {settings}), Optuna {version('optuna')}"
