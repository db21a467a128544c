"""`python -m pix`: the same command as `pix`."""

import sys

from pix.cli import command

sys.exit(command())
