"""The TSDAE+GPL draft: its experiment; protocol in `sentsweep.search_spaces.tsdae_gpl_draft`."""
