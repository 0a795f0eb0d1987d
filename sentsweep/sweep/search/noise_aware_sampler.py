"""The noise-aware sampler of `--search optuna --sampler noise-gp`: a Gaussian process that takes each configuration's
mean over its seeds as the observation and its standard error as that observation's noise.

Optuna 5.0's `GPSampler` fits one noise level shared by every trial (a homoscedastic likelihood, its variance fitted
with the kernel's parameters) and has no way to be given a noise per trial; BoTorch and Ax are not in the lock. So
this sampler is a minimal heteroscedastic GP on numpy, within Optuna's sampler API:

- Observations: the completed trials' values (the seed means `SeedAveragingRepeater` tells the study) with a fixed
  noise variance per trial from se, the standard error of the mean the repeater keeps as the trial's user attribute
  `seed_se`: se^2 moderated toward the pooled se^2 of all trials (`observation_noise`: a few seeds' se is too
  unsure to take as known). A trial without one (a single seed) gets the pooled se^2 (none known: NOISE_FLOOR).
- Model: a zero-mean GP on the standardised values, Matérn 5/2 kernel with one length scale per parameter (a
  choice's one-hot columns share one) and an output variance. Inputs in [0, 1]: a float by its range (on a log
  scale where its distribution is), a choice one-hot, so mixed spaces (a learning rate and a pooling) share one
  model. The kernel's hyperparameters are averaged over, not fitted (`AveragedGP`): where a configuration's mean is
  as noisy as the configurations differ, their likelihood is nearly flat between a smooth trend and a narrow peak,
  and a point estimate (maximum likelihood, or a prior's mode) commits to one of them: a smooth fit puts the best
  posterior mean at the edge of the points around a narrow optimum, and a flat one (output variance near 0) makes
  every proposal alike. The model is the average of the GPs of HYPER_DRAWS hyperparameter draws from their prior
  (each length scale log-uniform over LENGTH_RANGE, the output variance over SCALE_RANGE), each weighted by its
  marginal likelihood (Bayesian model averaging by importance sampling from the prior, as in Snoek, Larochelle,
  Adams 2012, who average over the hyperparameters' posterior by slice sampling); the draws come from a generator
  seeded with HYPER_SEED, so the same trials give the same model, and the draws of highest weight that hold
  KEPT_MASS of it are kept. Importance sampling from the prior thins as the parameters grow in number (a sweep
  over more than a few parameters averages over fewer effective draws).
- Acquisition: Thompson sampling (Thompson 1933; Kandasamy et al. 2018 for parallel proposals): a draw of the
  hyperparameters by weight, then one function drawn jointly at CANDIDATES random points of the space from that
  draw's posterior, and the point where it is highest. Each configuration is proposed with the probability that
  it is the best, so proposals gather where the best is likely and spread as far as the noise leaves it unsure
  (expected improvement over a flat or noise-dominated fit explores like random search). Trials still running
  (those the model does not observe yet) count with their posterior mean as value (the kriging believer), so that
  parallel trials are not proposed at one point.
- The first STARTUP_TRIALS configurations, and any parameter outside the space every trial shares, are sampled at
  random (Optuna's `RandomSampler`).

What it assumes: a score that varies smoothly with each parameter, on some length scale within LENGTH_RANGE of the
parameter's range; each configuration's mean as noisy as its (moderated) standard error; a choice's options equally
alike.

Proposals are reproducible: the candidates and the function drawn for trial k come from a generator seeded with
(seed, k), the random ones from the `RandomSampler`'s seeded generator, which is part of the sampler's state; Ray
Tune's `OptunaSearch` saves the study with its sampler in the experiment's state, so `--resume` restores both.
`--extend` runs a grid's missing trials and does not sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from sentsweep.errors import InputError

STARTUP_TRIALS = 4  # the project's choice: random configurations before the model is fitted
CANDIDATES = 512  # random points of the space each drawn function is maximised over
HYPER_DRAWS = 512  # kernel hyperparameter draws from the prior the model averages over
LENGTH_RANGE = (0.02, 5.0)  # the prior's range of each length scale (inputs in [0, 1]), log-uniform
SCALE_RANGE = (0.05, 5.0)  # the prior's range of the output variance (standardised units), log-uniform
HYPER_SEED = 0  # the draws are fixed: the same trials give the same model
KEPT_MASS = 0.99  # the draws kept: the fewest of highest weight that hold this much of it
NOISE_FLOOR = 1e-6  # noise variance (standardised units) where no trial's standard error is known
SE_ATTRIBUTE = "seed_se"  # the user attribute SeedAveragingRepeater keeps each configuration's standard error in


def check_space(axes: Mapping, sampler: str = "noise-gp") -> None:
    """An InputError unless the sampled space has a continuous parameter (a Ray Tune float range of more than one
    value): the model of this sampler (and of `sampler`, the `--sampler` named, which fits it) is over a continuous
    space, and a space of choices alone is a grid."""
    from ray.tune.search.sample import Float

    if not any(isinstance(domain, Float) and domain.lower < domain.upper for domain in axes.values()):
        raise InputError(f"--sampler {sampler} needs a continuous parameter (a float range of more than one value) "
                         f"among the sampled {', '.join(sorted(axes)) or 'none'}: use --search grid or the tpe sampler")


def encode(configurations: list[dict], space: dict) -> np.ndarray:
    """Configurations as the model's inputs, one row each: floats and ints in [0, 1] by their range (log where
    theirs is), choices one-hot."""
    from optuna.distributions import CategoricalDistribution

    columns = []
    for name, distribution in space.items():
        values = [configuration[name] for configuration in configurations]
        if isinstance(distribution, CategoricalDistribution):
            columns += [np.array([value == choice for value in values], dtype=float) for choice in distribution.choices]
            continue
        low, high, values = float(distribution.low), float(distribution.high), np.array(values, dtype=float)
        if distribution.log:
            low, high, values = math.log(low), math.log(high), np.log(values)
        columns.append(np.full(len(values), 0.5) if high == low else (values - low) / (high - low))
    return np.column_stack(columns)


def parameter_columns(space: dict) -> list[int]:
    """For each column of `encode`'s rows, the index in `space` of the parameter it encodes (a choice has a column
    per option)."""
    from optuna.distributions import CategoricalDistribution

    return [index for index, distribution in enumerate(space.values())
            for _ in (distribution.choices if isinstance(distribution, CategoricalDistribution) else [None])]


def random_candidates(space: dict, rng: np.random.Generator, count: int) -> list[dict]:
    """`count` configurations drawn at random from `space`, drawn one parameter at a time for all of them: a choice
    uniformly, a float uniformly over its range (log-uniformly where its distribution is log), an int as the
    rounded float."""
    from optuna.distributions import CategoricalDistribution, IntDistribution

    columns = {}
    for name, distribution in space.items():
        if isinstance(distribution, CategoricalDistribution):
            picks = rng.integers(len(distribution.choices), size=count)
            columns[name] = [distribution.choices[int(pick)] for pick in picks]
            continue
        low, high = float(distribution.low), float(distribution.high)
        values = (np.exp(rng.uniform(math.log(low), math.log(high), size=count)) if distribution.log
                  else rng.uniform(low, high, size=count))
        columns[name] = ([int(round(value)) for value in values] if isinstance(distribution, IntDistribution)
                         else [float(value) for value in values])
    return [{name: column[index] for name, column in columns.items()} for index in range(count)]


def matern52(a: np.ndarray, b: np.ndarray, lengths: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The Matérn 5/2 kernel between the rows of `a` and of `b` under each draw's input length scales (draws x
    columns) and output variance: draws x len(a) x len(b)."""
    left, right = a[None] / lengths[:, None, :], b[None] / lengths[:, None, :]
    squared = ((left ** 2).sum(-1)[:, :, None] + (right ** 2).sum(-1)[:, None, :]
               - 2 * left @ right.transpose(0, 2, 1))
    root5 = np.sqrt(5.0 * np.clip(squared, 0.0, None))
    return scales[:, None, None] * (1 + root5 + root5 ** 2 / 3) * np.exp(-root5)


class AveragedGP:
    """GPs with a fixed noise variance per observation, averaged over their kernel's hyperparameters (module
    docstring): `posterior` of the average, `draw` of one function from it."""

    def __init__(self, x: np.ndarray, y: np.ndarray, noise: np.ndarray, columns: list[int]) -> None:
        """`columns`: the parameter each input column belongs to (a choice's one-hot columns share one length
        scale)."""
        rng = np.random.default_rng(HYPER_SEED)
        logs = rng.uniform(*np.log(LENGTH_RANGE), size=(HYPER_DRAWS, max(columns) + 1))
        lengths, scales = np.exp(logs)[:, columns], np.exp(rng.uniform(*np.log(SCALE_RANGE), size=HYPER_DRAWS))
        covariance = matern52(x, x, lengths, scales) + np.diag(noise + 1e-8)[None]
        chol = np.linalg.cholesky(covariance)
        inverse = np.linalg.inv(covariance)
        alpha = inverse @ y
        log_likelihood = -0.5 * alpha @ y - np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        weights = np.exp(log_likelihood - log_likelihood.max())
        order = np.argsort(-weights, kind="stable")
        kept = order[:int(np.searchsorted(np.cumsum(weights[order]) / weights.sum(), KEPT_MASS)) + 1]
        self.x, self.noise, self.columns = x, noise, columns
        self.lengths, self.scales, self.inverse, self.alpha = lengths[kept], scales[kept], inverse[kept], alpha[kept]
        self.weights = weights[kept] / weights[kept].sum()

    def components(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each kept draw's posterior mean and variance of the noise-free function at `points` (draws x points)."""
        cross = matern52(points, self.x, self.lengths, self.scales)
        mean = np.einsum("dpn,dn->dp", cross, self.alpha)
        reduction = ((cross @ self.inverse) * cross).sum(axis=-1)
        return mean, np.clip(self.scales[:, None] - reduction, 1e-12, None)

    def posterior(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The noise-free function's posterior mean and standard deviation at `points` under the average."""
        mean, variance = self.components(points)
        averaged = self.weights @ mean
        return averaged, np.sqrt(np.clip(self.weights @ (variance + mean ** 2) - averaged ** 2, 1e-12, None))

    def draw(self, points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One function drawn from the posterior at `points`: a draw of the hyperparameters by weight, then the
        function jointly at every point from that draw's GP."""
        pick = int(rng.choice(len(self.weights), p=self.weights))
        lengths, scales = self.lengths[pick:pick + 1], self.scales[pick:pick + 1]
        cross = matern52(points, self.x, lengths, scales)[0]
        covariance = matern52(points, points, lengths, scales)[0] - cross @ self.inverse[pick] @ cross.T
        lower = np.linalg.cholesky(covariance + 1e-6 * np.eye(len(points)))
        return cross @ self.alpha[pick] + lower @ rng.standard_normal(len(points))


def _optuna_base():
    from optuna.samplers import BaseSampler

    return BaseSampler


class NoiseAwareGPSampler(_optuna_base()):
    """Optuna sampler: the heteroscedastic GP of the module docstring, seeded with `seed`."""

    def __init__(self, seed: int, startup_trials: int = STARTUP_TRIALS) -> None:
        from optuna.samplers import RandomSampler

        self.seed = seed
        self.startup_trials = startup_trials
        self._random = RandomSampler(seed=seed)

    def reseed_rng(self) -> None:
        self._random.reseed_rng()

    def infer_relative_search_space(self, study, trial) -> dict:
        from optuna.search_space import intersection_search_space

        space = intersection_search_space(study.get_trials(deepcopy=False))
        return {name: distribution for name, distribution in space.items() if not distribution.single()}

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._random.sample_independent(study, trial, param_name, param_distribution)

    def sample_relative(self, study, trial, search_space: dict) -> dict:
        from optuna.trial import TrialState

        if not search_space:
            return {}
        observed = self.observations(study, search_space)
        if observed is None:
            return {}
        trials, values, se = observed
        model, x, y, noise = fitted_model(trials, values, se, search_space, study.direction.name == "MAXIMIZE")
        seen = {t.number for t in trials} | {trial.number}
        running = [t for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
                   if t.number not in seen and all(name in t.params for name in search_space)]
        if running:  # the kriging believer: a running trial not observed counts with its posterior mean
            pending = encode([t.params for t in running], search_space)
            believed, _ = model.posterior(pending)
            model = AveragedGP(np.vstack([x, pending]), np.concatenate([y, believed]),
                               np.concatenate([noise, np.full(len(running), NOISE_FLOOR)]), model.columns)
        rng = np.random.default_rng([self.seed, trial.number])
        candidates = random_candidates(search_space, rng, CANDIDATES)
        return candidates[int(np.argmax(model.draw(encode(candidates, search_space), rng)))]

    def observations(self, study, search_space: dict) -> tuple[list, np.ndarray, np.ndarray] | None:
        """(trials, values, standard errors) the model is fitted to: the completed trials over the space, each its
        value and its user attribute SE_ATTRIBUTE (nan without one); None before `startup_trials` of them."""
        from optuna.trial import TrialState

        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        trials = [t for t in trials if all(name in t.params for name in search_space)]
        if len(trials) < self.startup_trials:
            return None
        return trials, np.array([t.value for t in trials], dtype=float), standard_errors(trials)


def standard_errors(trials) -> np.ndarray:
    """Each trial's user attribute SE_ATTRIBUTE (nan without one)."""
    return np.array([float(t.user_attrs.get(SE_ATTRIBUTE, float("nan"))) for t in trials], dtype=float)


def observation_noise(se: np.ndarray, spread: float) -> np.ndarray:
    """Each observation's noise variance in standardised units, (se / spread)^2 moderated toward the sweep's pooled
    one: a configuration's own standard error rests on few seeds (3 seeds: 2 degrees of freedom), too few to take
    as its known noise, so its variance is (own + sum of all k known) / (1 + k), every configuration with a
    standard error weighted alike (the same number of seeds each); an observation without one gets the pooled
    mean (NOISE_FLOOR where none is known)."""
    variance = (se / spread) ** 2
    known = variance[np.isfinite(variance)]
    if not len(known):
        return np.full(len(variance), NOISE_FLOOR)
    moderated = np.where(np.isfinite(variance), (variance + known.sum()) / (1 + len(known)), known.mean())
    return np.maximum(moderated, NOISE_FLOOR)


def fitted_model(trials: list, values: np.ndarray, se: np.ndarray, search_space: dict, maximize: bool):
    """(model, x, y, noise): the GP fitted to `trials` over `search_space`, each its value with its standard error
    as noise, values standardised (and negated for a minimised objective, so that larger is better)."""
    values = values if maximize else -values
    center, spread = values.mean(), values.std() or 1.0
    y = (values - center) / spread
    noise = observation_noise(se, spread)
    x = encode([t.params for t in trials], search_space)
    return AveragedGP(x, y, noise, parameter_columns(search_space)), x, y, noise


def model_best(trials: list, maximize: bool = True):
    """The model's best of the completed `trials`: the one whose posterior mean is best under the GP fitted to all
    of them (each its value with its standard error as noise) over the parameters they all vary; a mean that is
    high by chance does not win unless its neighbours agree. With fewer than 2 completed trials or no parameter
    they vary, the best value; None without any."""
    from optuna.search_space import intersection_search_space
    from optuna.trial import TrialState

    trials = [t for t in trials if t.state == TrialState.COMPLETE]
    if not trials:
        return None
    space = {name: d for name, d in intersection_search_space(trials).items() if not d.single()}
    values = np.array([t.value for t in trials], dtype=float)
    if len(trials) < 2 or not space:
        return trials[int(np.argmax(values if maximize else -values))]
    model, x, _, _ = fitted_model(trials, values, standard_errors(trials), space, maximize)
    return trials[int(np.argmax(model.posterior(x)[0]))]
