"""The noise-aware sampler of `--search optuna --sampler noise-gp`: a Gaussian process that takes each configuration's
mean over its seeds as the observation and its standard error as that observation's noise.

Optuna 5.0's `GPSampler` fits one noise level shared by every trial (a homoscedastic likelihood, its variance fitted
with the kernel's parameters) and has no way to be given a noise per trial; BoTorch and Ax are not in the lock. So
this sampler is a minimal heteroscedastic GP on torch, within Optuna's sampler API:

- Observations: the completed trials' values (the seed means `SeedAveragingRepeater` tells the study) with fixed
  noise variance se^2 per trial, se the standard error of the mean the repeater keeps as the trial's user attribute
  `seed_se`. A trial without one (a single seed) gets the median of the others' se^2 (none known: NOISE_FLOOR).
- Model: a zero-mean GP on the standardised values, Matérn 5/2 kernel with one length scale per input (ARD) and an
  output scale, fitted by maximising the marginal likelihood (Adam, FIT_STEPS steps from a fixed start: the same
  trials give the same fit). Inputs in [0, 1]: a float by its range (on a log scale where its distribution is), a
  choice one-hot, so mixed spaces (a learning rate and a pooling) share one model.
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
FIT_STEPS = 150
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


def _encode(params: dict, space: dict) -> np.ndarray:
    """A configuration as the model's input: floats and ints in [0, 1] by their range (log where theirs is),
    choices one-hot."""
    from optuna.distributions import CategoricalDistribution

    row = []
    for name, distribution in space.items():
        value = params[name]
        if isinstance(distribution, CategoricalDistribution):
            row += [float(value == choice) for choice in distribution.choices]
            continue
        low, high = float(distribution.low), float(distribution.high)
        if distribution.log:
            low, high, value = math.log(low), math.log(high), math.log(value)
        row.append(0.5 if high == low else (float(value) - low) / (high - low))
    return np.array(row, dtype=float)


def _random_params(space: dict, rng: np.random.Generator) -> dict:
    from optuna.distributions import CategoricalDistribution, IntDistribution

    params = {}
    for name, distribution in space.items():
        if isinstance(distribution, CategoricalDistribution):
            params[name] = distribution.choices[int(rng.integers(len(distribution.choices)))]
            continue
        low, high = float(distribution.low), float(distribution.high)
        value = (math.exp(rng.uniform(math.log(low), math.log(high))) if distribution.log
                 else rng.uniform(low, high))
        params[name] = int(round(value)) if isinstance(distribution, IntDistribution) else float(value)
    return params


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

    def fit(self) -> HeteroscedasticGP:
        torch = self.torch
        lengths = self.log_lengths.clone().requires_grad_(True)
        scale = self.log_scale.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([lengths, scale], lr=0.05)
        for _ in range(FIT_STEPS):
            optimizer.zero_grad()
            chol = torch.linalg.cholesky(self._covariance(lengths, scale))
            alpha = torch.cholesky_solve(self.y[:, None], chol)
            loss = 0.5 * (self.y[:, None] * alpha).sum() + chol.diagonal().log().sum()
            loss = loss + 0.5 * ((lengths - math.log(0.5)) ** 2).sum()  # a weak prior keeps length scales finite
            loss.backward()
            optimizer.step()
        self.log_lengths, self.log_scale = lengths.detach(), scale.detach()
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

    def __init__(self, seed: int) -> None:
        from optuna.samplers import RandomSampler

        self.seed = seed
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
        sign = 1.0 if study.direction.name == "MAXIMIZE" else -1.0
        values = sign * values
        center, spread = values.mean(), values.std() or 1.0
        y = (values - center) / spread
        noise = self._noise(se, spread)
        x = np.stack([_encode(t.params, search_space) for t in trials])
        model = HeteroscedasticGP(x, y, noise).fit()
        seen = {t.number for t in trials} | {trial.number}
        running = [t for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
                   if t.number not in seen and all(name in t.params for name in search_space)]
        if running:  # the kriging believer: a running trial not observed counts with its posterior mean
            pending = np.stack([_encode(t.params, search_space) for t in running])
            believed, _ = model.posterior(pending)
            model = HeteroscedasticGP(np.vstack([x, pending]), np.concatenate([y, believed]),
                                      np.concatenate([noise, np.full(len(running), NOISE_FLOOR)])).fit()
        incumbent = float(model.posterior(x)[0].max())
        rng = np.random.default_rng([self.seed, trial.number])
        candidates = [_random_params(search_space, rng) for _ in range(CANDIDATES)]
        mean, std = model.posterior(np.stack([_encode(c, search_space) for c in candidates]))
        return candidates[int(np.argmax(expected_improvement(mean, std, incumbent)))]

    def observations(self, study, search_space: dict) -> tuple[list, np.ndarray, np.ndarray] | None:
        """(trials, values, standard errors) the model is fitted to: the completed trials over the space, each its
        value and its user attribute SE_ATTRIBUTE (nan without one); None before STARTUP_TRIALS of them."""
        from optuna.trial import TrialState

        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        trials = [t for t in trials if all(name in t.params for name in search_space)]
        if len(trials) < STARTUP_TRIALS:
            return None
        return (trials, np.array([t.value for t in trials], dtype=float),
                np.array([float(t.user_attrs.get(SE_ATTRIBUTE, float("nan"))) for t in trials], dtype=float))

    @staticmethod
    def _noise(se: np.ndarray, spread: float) -> np.ndarray:
        """Each observation's noise variance in standardised units: (se / spread)^2; the median of the known ones
        where an observation has none (NOISE_FLOOR where none is known)."""
        variance = (se / spread) ** 2
        known = variance[np.isfinite(variance)]
        fill = float(np.median(known)) if len(known) else NOISE_FLOOR
        return np.maximum(np.where(np.isfinite(variance), variance, fill), NOISE_FLOOR)
