"""Reiml 2023: its published values and experiments; protocols in `sentsweep.search_spaces.reiml_2023`."""
