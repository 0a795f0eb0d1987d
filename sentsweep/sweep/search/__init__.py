"""What Ray Tune runs and how it searches: each trial's config, target tasks, Optuna's sampler, seed groups, races."""
