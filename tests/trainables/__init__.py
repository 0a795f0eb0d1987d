"""Tests of sentsweep.trainables: the methods, their settings and the shared training loop."""
