"""Reads sweeps from MLflow and writes mean ± std over seeds tables."""
