"""`python -m sentsweep`: the same as the `sentsweep` command."""

import sys

from sentsweep.cli import main

sys.exit(main())
