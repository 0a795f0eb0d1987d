"""Losses that sentence-transformers lacks (Noise Matching, SimCSE-BCE, ConSERT, CLM / MLM auto-encoders, MLM on
a shared encoder), TSDAE computed as sentence-transformers does with less work, and Contrastive Tension as the
TSDAE paper defines it (on sentence-transformers' ContrastiveTensionLoss).

Each loss names the work it implements in `reference` and gives its BibTeX entry as `citation`."""
