"""`python -m sentsweep.analysis`: the same as `sentsweep analyze`."""

import sys

from sentsweep.analysis.cli import main

sys.exit(main(prog="python -m sentsweep.analysis"))
