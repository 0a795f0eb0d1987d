"""TSDAE (Wang et al. 2021): its published values and experiments; protocols in `sentsweep.search_spaces.tsdae`."""
