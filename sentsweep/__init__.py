"""Shared core of the sweep system: model loading, data readers, noise, evaluation, tracking, launching."""
