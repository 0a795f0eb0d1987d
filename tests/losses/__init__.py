"""Tests of sentsweep.losses: each loss against its definition and in sentence-transformers' trainer."""
