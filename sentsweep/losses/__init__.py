"""Losses that sentence-transformers lacks (Noise Matching, ConSERT, CLM / MLM auto-encoders, MLM on a shared
encoder) and TSDAE, computed as sentence-transformers does with less work.

Each loss names the work it implements in `reference` and gives its BibTeX entry as `citation`."""
