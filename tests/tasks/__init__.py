"""Tests of sentsweep.tasks: the evaluation tasks, their registry and MTEB's tasks."""
