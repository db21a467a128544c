"""`python -m pix`: the same command as `pix`."""

import sys

from pix.cli import main

sys.exit(main())
