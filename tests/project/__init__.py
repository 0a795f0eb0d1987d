"""Tests of the repository as a whole: layers and sizes, docs, benchmarks' records, the environment."""
