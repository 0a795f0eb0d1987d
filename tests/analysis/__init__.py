"""Tests of sentsweep.analysis: tables, significance, races, reports, plots, accounts of runs."""
