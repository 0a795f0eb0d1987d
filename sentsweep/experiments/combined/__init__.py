"""Experiments combining several works (the project's own); protocols in `sentsweep.search_spaces.combined`."""
