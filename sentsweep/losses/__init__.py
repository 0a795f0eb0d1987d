"""Losses that sentence-transformers lacks: Noise Matching, ConSERT, CLM / MLM auto-encoders, MLM on a shared encoder."""
