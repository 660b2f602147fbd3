"""`python -m byok_tui` is the same as the `byok-tui` command."""

import sys

from byok_tui.launch import run

sys.exit(run())
