"""The seed documents' protocols as data, every value with its source, shared by the experiments that re-run
them: `tsdae` (TSDAE, the TSDAE paper: its search, main, corpus-size protocols and each method's App. B settings),
`contrastive` (Reiml 2023's Noise Matching, Wang 2022's multi-task and batch-size setups, the learning-rate sweep),
`supervised` (SBERT, Augmented SBERT, GPL, the labelled-data intersection) and `chains` (stages started from earlier
ones).

A sweep whose protocol no other experiment shares declares it in its own module (as
`sentsweep.experiments.squad_sentence_retrieval` does); the machinery, `Protocol` and `Sourced`, is
`sentsweep.sweep.config.protocol`'s.
"""
