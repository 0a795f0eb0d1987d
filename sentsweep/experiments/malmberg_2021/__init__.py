"""Malmberg 2021: its experiment with its published values; protocol in `sentsweep.search_spaces.malmberg_2021`."""
