"""The noise-aware sampler of `--search optuna --sampler noise-gp`: a Gaussian process that takes each configuration's
mean over its seeds as the observation and its standard error as that observation's noise.

Optuna 5.0's `GPSampler` fits one noise level shared by every trial (a homoscedastic likelihood, its variance fitted
with the kernel's parameters) and has no way to be given a noise per trial; BoTorch and Ax are not in the lock. So
this sampler is a minimal heteroscedastic GP on torch, within Optuna's sampler API:

- Observations: the completed trials' values (the seed means `SeedAveragingRepeater` tells the study) with a fixed
  noise variance per trial from se, the standard error of the mean the repeater keeps as the trial's user attribute
  `seed_se`: se^2 moderated toward the pooled se^2 of all trials (`observation_noise`: a few seeds' se is too
  unsure to take as known). A trial without one (a single seed) gets the pooled se^2 (none known: NOISE_FLOOR).
- Model: a zero-mean GP on the standardised values, Matérn 5/2 kernel with one length scale per input (ARD) and an
  output scale, fitted by maximising the marginal likelihood (L-BFGS-B, at most FIT_ITERATIONS iterations within
  FIT_BOUNDS from a fixed start: the same trials give the same fit). Inputs in [0, 1]: a float by its range (on a
  log scale where its distribution is), a choice one-hot, so mixed spaces (a learning rate and a pooling) share one
  model.
- Acquisition: expected improvement of the noise-free function over the best posterior mean at the observed
  configurations (the incumbent a noisy observation cannot inflate), maximised over CANDIDATES random points of the
  space. Trials still running (those the model does not observe yet) count with their posterior mean as value
  (the kriging believer), so that parallel trials are not proposed at one point.
- The first STARTUP_TRIALS configurations, and any parameter outside the space every trial shares, are sampled at
  random (Optuna's `RandomSampler`).

Proposals are reproducible: the candidates of trial k are drawn from a generator seeded with (seed, k), the random
ones from the `RandomSampler`'s seeded generator, which is part of the sampler's state; Ray Tune's `OptunaSearch`
saves the study with its sampler in the experiment's state, so `--resume` restores both. `--extend` runs a grid's
missing trials and does not sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from sentsweep.errors import InputError

STARTUP_TRIALS = 4  # the project's choice: random configurations before the model is fitted
CANDIDATES = 2048  # random points the acquisition is maximised over
FIT_ITERATIONS = 50  # L-BFGS-B iterations of the marginal likelihood's fit
FIT_BOUNDS = (-7.0, 5.0)  # each log length scale and the log output scale (standardised units)
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


class HeteroscedasticGP:
    """A GP with a fixed noise variance per observation (module docstring); `fit` then `posterior`."""

    def __init__(self, x: np.ndarray, y: np.ndarray, noise: np.ndarray) -> None:
        import torch

        self.torch = torch
        self.x = torch.tensor(x, dtype=torch.float64)
        self.y = torch.tensor(y, dtype=torch.float64)
        self.noise = torch.tensor(noise, dtype=torch.float64)
        self.log_lengths = torch.zeros(x.shape[1], dtype=torch.float64) + math.log(0.5)
        self.log_scale = torch.zeros((), dtype=torch.float64)

    def _kernel(self, a, b, log_lengths, log_scale):
        distance = self.torch.cdist(a / log_lengths.exp(), b / log_lengths.exp()).clamp_min(1e-12)
        root5 = math.sqrt(5.0) * distance
        return log_scale.exp() * (1 + root5 + root5 ** 2 / 3) * self.torch.exp(-root5)

    def _covariance(self, log_lengths, log_scale):
        k = self._kernel(self.x, self.x, log_lengths, log_scale)
        return k + self.torch.diag(self.noise + 1e-8)

    def _negative_log_likelihood(self, log_lengths, log_scale):
        chol = self.torch.linalg.cholesky(self._covariance(log_lengths, log_scale))
        alpha = self.torch.cholesky_solve(self.y[:, None], chol)
        loss = 0.5 * (self.y[:, None] * alpha).sum() + chol.diagonal().log().sum()
        return loss + 0.5 * ((log_lengths - math.log(0.5)) ** 2).sum()  # a weak prior keeps length scales finite

    def fit(self) -> HeteroscedasticGP:
        """Maximises the marginal likelihood (with the length scales' prior) by L-BFGS-B within FIT_BOUNDS, at most
        FIT_ITERATIONS iterations from the fixed start."""
        from scipy.optimize import minimize

        torch, dims = self.torch, self.x.shape[1]

        def loss_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
            params = torch.tensor(flat, dtype=torch.float64, requires_grad=True)
            loss = self._negative_log_likelihood(params[:dims], params[dims])
            loss.backward()
            return float(loss.detach()), params.grad.numpy().copy()

        start = np.append(self.log_lengths.numpy(), float(self.log_scale))
        fitted = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B", bounds=[FIT_BOUNDS] * (dims + 1),
                          options={"maxiter": FIT_ITERATIONS}).x
        self.log_lengths = torch.tensor(fitted[:dims], dtype=torch.float64)
        self.log_scale = torch.tensor(fitted[dims], dtype=torch.float64)
        return self

    def posterior(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The noise-free function's posterior mean and standard deviation at `points`."""
        torch = self.torch
        at = torch.tensor(points, dtype=torch.float64)
        chol = torch.linalg.cholesky(self._covariance(self.log_lengths, self.log_scale))
        cross = self._kernel(at, self.x, self.log_lengths, self.log_scale)
        mean = cross @ torch.cholesky_solve(self.y[:, None], chol)
        solved = torch.cholesky_solve(cross.T, chol)
        variance = (self.log_scale.exp() - (cross * solved.T).sum(dim=1)).clamp_min(1e-12)
        return mean[:, 0].numpy(), variance.sqrt().numpy()


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    from scipy.stats import norm

    z = (mean - best) / std
    return (mean - best) * norm.cdf(z) + std * norm.pdf(z)


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
            model = HeteroscedasticGP(np.vstack([x, pending]), np.concatenate([y, believed]),
                                      np.concatenate([noise, np.full(len(running), NOISE_FLOOR)])).fit()
        incumbent = float(model.posterior(x)[0].max())
        rng = np.random.default_rng([self.seed, trial.number])
        candidates = random_candidates(search_space, rng, CANDIDATES)
        mean, std = model.posterior(encode(candidates, search_space))
        return candidates[int(np.argmax(expected_improvement(mean, std, incumbent)))]

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
    return HeteroscedasticGP(x, y, noise).fit(), x, y, noise


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
