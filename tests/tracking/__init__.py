"""Tests of sentsweep.tracking: MLflow stores, writes, runs, the UI and the records of a sweep."""
