"""Tests of sentsweep.preparation_cache: trials' preparation stages cached by content."""
