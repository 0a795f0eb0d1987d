"""Tests of sentsweep.sweep: options and checks, the cluster and resources, search, execution, faults."""
