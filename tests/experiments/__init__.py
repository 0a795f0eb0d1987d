"""Tests of sentsweep.experiments: each paper's sweeps, their protocols, cards and settings."""
