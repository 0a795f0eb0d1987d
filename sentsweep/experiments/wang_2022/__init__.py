"""Wang 2022: its published values and experiments; protocols in `sentsweep.search_spaces.wang_2022`."""
